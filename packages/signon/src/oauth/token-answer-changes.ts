import { OutageTracker, describeDatabaseError, type Logger } from "@tessera/db";
import pg from "pg";
import type { TokenAnswerCache } from "./token-answer-cache.js";

/** The channel and notice of the database's `token_answers_changed` triggers (migration 0016). */
export const TOKEN_ANSWERS_CHANNEL = "signon_token_answers";
export const TOKEN_ANSWERS_NOTICE = "signon_token_answers_changed";

/** How the notification connection names itself to the server (`pg_stat_activity.application_name`). */
export const LISTENER_APPLICATION_NAME = "signon token answers";

/** How often the notification connection is checked, and how long the check may take before the connection counts as lost. */
export const LISTENER_CHECK_INTERVAL_MS = 10_000;
export const LISTENER_CHECK_TIMEOUT_MS = 5_000;
/** A lost notification connection is opened again after 1 s; after each further failure twice as long, up to 30 s. */
const RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

/** What this needs of a notice from the server. */
interface Notice {
  message?: string | undefined;
}

/** Stops following changes. */
export interface TokenAnswerFollower {
  close(): Promise<void>;
}

/**
 * Makes `cache` forget its answers whenever the database reports a change
 * that could alter one, and keep answers only while such reports can reach
 * this process:
 *
 * - A change made through `pool` (this process's own): the triggers send its
 *   connection a notice; the cache forgets when the notice arrives and again
 *   when the connection is released, after the commit, so a request that
 *   starts after the change's reply never sees an answer from before it.
 * - A change made anywhere else (another instance, plain SQL): a connection
 *   of its own listens on the channel the triggers notify once the change
 *   commits.
 * - While that connection is not listening (not yet open, lost, failing its
 *   periodic check), the cache keeps nothing; it reconnects by itself, after
 *   1 s, then backing off up to 30 s while it keeps failing (the database
 *   away, a standby that refuses `LISTEN`).
 */
export function followTokenAnswerChanges(pool: pg.Pool, cache: TokenAnswerCache, log: Logger): TokenAnswerFollower {
  // The pool's connections, each with the notice listener this follower gave it (taken off again on close).
  const watched = new Map<pg.PoolClient, (notice: Notice) => void>();
  const changedDuringCheckout = new WeakSet<pg.PoolClient>();
  const onAcquire = (client: pg.PoolClient): void => {
    if (watched.has(client)) return;
    const onNotice = (notice: Notice): void => {
      if (notice.message !== TOKEN_ANSWERS_NOTICE) return;
      cache.forgetAll();
      changedDuringCheckout.add(client);
    };
    watched.set(client, onNotice);
    client.on("notice", onNotice);
  };
  const onRelease = (_error: Error | undefined, client: pg.PoolClient): void => {
    if (changedDuringCheckout.delete(client)) cache.forgetAll();
  };
  const onRemove = (client: pg.PoolClient): void => {
    watched.delete(client);
  };
  pool.on("acquire", onAcquire);
  pool.on("release", onRelease);
  pool.on("remove", onRemove);

  const outage = new OutageTracker("token answer notifications", log);
  let failures = 0;
  let listener: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let check: NodeJS.Timeout | undefined;
  // A failure that is not an outage (refused credentials, say) is logged once until the connection works again.
  let complained = false;

  const lost = (client: pg.Client, error: unknown): void => {
    if (listener !== client) return;
    listener = null;
    cache.following = false;
    clearInterval(check);
    client.end().catch(() => undefined);
    if (closed) return;
    if (!outage.failed(error) && !complained) {
      complained = true;
      log.warn(`token answer notifications: not listening (${describeDatabaseError(error)}); answers are read from the database until it works again`);
    }
    failures += 1;
    retry = setTimeout(listen, Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** Math.min(failures - 1, 5)));
    retry.unref();
  };

  const listen = (): void => {
    if (closed) return;
    // The pool's own settings: the same server, credentials, TLS and keepalive; named for pg_stat_activity.
    const client = new pg.Client({ ...pool.options, application_name: LISTENER_APPLICATION_NAME });
    listener = client;
    client.on("error", (error) => lost(client, error));
    client.on("end", () => lost(client, new Error("the connection ended")));
    client.on("notification", (message) => {
      if (message.channel === TOKEN_ANSWERS_CHANNEL) cache.forgetAll();
    });
    client
      .connect()
      .then(() => client.query(`listen ${TOKEN_ANSWERS_CHANNEL}`))
      .then(() => {
        if (listener !== client) return;
        cache.following = true;
        outage.succeeded();
        complained = false;
        failures = 0;
        check = setInterval(() => checkListener(client), LISTENER_CHECK_INTERVAL_MS);
        check.unref();
      })
      .catch((error: unknown) => lost(client, error));
  };

  // A connection that stalls without closing (a failed-over host, a dropped route) would hold notifications back unnoticed.
  const checkListener = (client: pg.Client): void => {
    const timer = setTimeout(() => lost(client, new Error("the connection did not answer its check")), LISTENER_CHECK_TIMEOUT_MS);
    client
      .query("select 1")
      .then(() => clearTimeout(timer))
      .catch((error: unknown) => {
        clearTimeout(timer);
        lost(client, error);
      });
  };

  listen();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(check);
      pool.off("acquire", onAcquire);
      pool.off("release", onRelease);
      pool.off("remove", onRemove);
      for (const [client, onNotice] of watched) client.off("notice", onNotice);
      watched.clear();
      cache.following = false;
      const client = listener;
      listener = null;
      // Ending a connection to a server that has stopped answering could wait for as long as TCP does.
      if (client) await Promise.race([client.end().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, LISTENER_CHECK_TIMEOUT_MS).unref())]);
    },
  };
}
