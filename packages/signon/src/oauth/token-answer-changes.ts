import { OutageTracker, describeDatabaseError, type Logger } from "@tessera/db";
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { TokenAnswerCache } from "./token-answer-cache.js";

/** The channel and notice of the database's `token_answers_changed` triggers (migration 0016). */
export const TOKEN_ANSWERS_CHANNEL = "signon_token_answers";
export const TOKEN_ANSWERS_NOTICE = "signon_token_answers_changed";

/** How the notification connection names itself to the server (`pg_stat_activity.application_name`). */
export const LISTENER_APPLICATION_NAME = "signon token answers";

/** Where each check sends its nonce through the pool, for the notification connection to receive. */
export const CHECK_CHANNEL = "signon_token_answers_check";

/**
 * How often the notification connection is checked end to end (a nonce
 * notified through the pool must reach it), and how long the nonce may take
 * once sent before the connection counts as lost.
 */
export const LISTENER_CHECK_INTERVAL_MS = 10_000;
export const LISTENER_CHECK_TIMEOUT_MS = 5_000;
/** A lost notification connection is opened again after 1 s; after each further failure twice as long, up to 30 s. */
const RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

/** The `client_min_messages` levels at which the triggers' notices reach the connection that made a change. */
const NOTICES_DELIVERED = new Set(["debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice"]);

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
 * - While that connection is not known to receive them (not yet open, lost,
 *   failing its end-to-end check every 10 s, or `client_min_messages` set
 *   above `notice`), the cache keeps nothing; it reconnects by itself, after
 *   1 s, then backing off up to 30 s while it keeps failing (the database
 *   away, a standby that refuses `LISTEN`).
 */
export function followTokenAnswerChanges(
  pool: pg.Pool,
  cache: TokenAnswerCache,
  log: Logger,
  timing: { checkIntervalMs: number; checkTimeoutMs: number } = { checkIntervalMs: LISTENER_CHECK_INTERVAL_MS, checkTimeoutMs: LISTENER_CHECK_TIMEOUT_MS },
): TokenAnswerFollower {
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
  let nextCheck: NodeJS.Timeout | undefined;
  // The check under way: the nonce on its way, and the timer that gives up on it once it has been sent.
  let check: { nonce: string; timer?: NodeJS.Timeout } | null = null;
  // A failure that is not an outage (refused credentials, say) is logged once until the connection works again.
  let complained = false;

  const lost = (client: pg.Client, error: unknown): void => {
    if (listener !== client) return;
    listener = null;
    cache.following = false;
    clearTimeout(nextCheck);
    clearTimeout(check?.timer);
    check = null;
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

  // End to end: a nonce notified through the pool must come back on this connection. It fails on a connection that
  // stalls without closing, on one that reaches another server than the pool (a failed-over host), and behind a pooler
  // in transaction mode, which does not pass notifications on.
  const runCheck = (client: pg.Client): void => {
    if (listener !== client) return;
    const current: { nonce: string; timer?: NodeJS.Timeout } = { nonce: randomUUID() };
    check = current;
    pool.query("select pg_notify($1, $2)", [CHECK_CHANNEL, current.nonce]).then(
      () => {
        if (check !== current) return;
        current.timer = setTimeout(() => lost(client, new Error(`a check notification did not arrive within ${timing.checkTimeoutMs} ms`)), timing.checkTimeoutMs);
        current.timer.unref();
      },
      (error: unknown) => lost(client, error),
    );
  };

  const checkPassed = (client: pg.Client): void => {
    clearTimeout(check?.timer);
    check = null;
    if (!cache.following) {
      cache.following = true;
      outage.succeeded();
      complained = false;
      failures = 0;
    }
    nextCheck = setTimeout(() => runCheck(client), timing.checkIntervalMs);
    nextCheck.unref();
  };

  const listen = (): void => {
    if (closed) return;
    // The pool's own settings: the same server, credentials, TLS and keepalive; named for pg_stat_activity.
    const client = new pg.Client({ ...pool.options, application_name: LISTENER_APPLICATION_NAME });
    listener = client;
    client.on("error", (error) => lost(client, error));
    client.on("end", () => lost(client, new Error("the connection ended")));
    client.on("notification", (message) => {
      if (listener !== client) return;
      if (message.channel === TOKEN_ANSWERS_CHANNEL) cache.forgetAll();
      else if (message.channel === CHECK_CHANNEL && check !== null && message.payload === check.nonce) checkPassed(client);
    });
    client
      .connect()
      .then(() => client.query<{ client_min_messages: string }>("show client_min_messages"))
      .then(({ rows: [setting] }) => {
        // The same role and database settings apply to the pool's connections: with notices held back, this process
        // would not hear of its own changes before replying.
        const level = setting?.client_min_messages ?? "";
        if (!NOTICES_DELIVERED.has(level)) throw new Error(`client_min_messages is ${level}, which holds back the notices of changes; set it to notice`);
        return client.query(`listen ${TOKEN_ANSWERS_CHANNEL}; listen ${CHECK_CHANNEL}`);
      })
      .then(() => runCheck(client))
      .catch((error: unknown) => lost(client, error));
  };

  listen();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearTimeout(nextCheck);
      clearTimeout(check?.timer);
      check = null;
      pool.off("acquire", onAcquire);
      pool.off("release", onRelease);
      pool.off("remove", onRemove);
      for (const [client, onNotice] of watched) client.off("notice", onNotice);
      watched.clear();
      cache.following = false;
      const client = listener;
      listener = null;
      if (client) await endWithin(client, LISTENER_CHECK_TIMEOUT_MS);
    },
  };
}

/** Ends a connection, and drops its socket if the server has not let it go within `ms` (one that stopped answering could hold it as long as TCP does). */
async function endWithin(client: pg.Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    client.end().then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  if (!ended) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
