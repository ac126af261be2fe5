import { randomUUID } from "node:crypto";
import { OutageTracker } from "@tessera/db";
import type { SignonContext } from "../context.js";
import {
  claimDuePushes,
  finishPushes,
  readUserJsonBodies,
  type ClaimedPush,
  type PushOutcome,
  type UserJsonBody,
} from "../repositories/push-deliveries.js";
import { classifyStatus, retryDelaySeconds, retryWindowOver } from "./backoff.js";
import { PushCredential } from "./push-credential.js";
import { reauthRequest, userUpdateRequest, type PushRequest } from "./push-request.js";

/** How the delivery worker behaves; every field has a default. */
export interface PushDeliveryOptions {
  /** Sends the requests; tests and the benchmark pass their own. */
  fetch?: typeof fetch;
  /** Most pushes in flight at once, in this process. */
  concurrency?: number;
  /** A request that has not answered after this long counts as a failed attempt. */
  requestTimeoutMs?: number;
  /** How often the loop looks for due pushes when it has nothing to do. */
  pollIntervalMs?: number;
  /** The first retry waits about this long (5 s by default); each later one twice as long, up to an hour. */
  retryBaseMs?: number;
  /** For jitter; `Math.random` by default. */
  random?: () => number;
  /**
   * Builds the request of a `logout` push (an OpenID Connect back-channel
   * logout token for the user, to the application's `backchannel_logout_uri`).
   * Without it, such pushes fail for good.
   */
  logoutRequest?: (push: { userUid: string; clientId: string; alg: string; backchannelLogoutUri: string }) => Promise<PushRequest>;
  /** Failed attempts are logged with `PushAttemptFields` (a retry as a warning, a push given up as an error). */
  log?: PushDeliveryLog;
}

/** What a failed attempt is logged with: never the token, nor the receiver's answer. */
export interface PushAttemptFields {
  application: string;
  uid: string;
  kind: "update" | "reauth" | "logout";
  /** The receiver's HTTP status; null when it gave none (no connection, no answer in time). */
  status: number | null;
  /** 1 for the first attempt at this state of the push. */
  attempt: number;
  /** `retry` (due again at `next_attempt_at`) or `failed` (given up). */
  outcome: "retry" | "failed";
  next_attempt_at?: string;
  /** Why, when there was no HTTP status. */
  error?: string;
}

/** Where the worker logs. */
export interface PushDeliveryLog {
  warn(message: string, fields?: PushAttemptFields): void;
  error(message: string, fields?: PushAttemptFields): void;
  info?(message: string): void;
}

/**
 * Delivers the push outbox (S13, S14): takes due pushes under a lease
 * (`FOR UPDATE SKIP LOCKED`, so several instances share the work without
 * sending one row twice at once), sends them with `fetch` and the push
 * credential, and records each outcome: delivered on 2xx, failed for good
 * on a 4xx other than 408/429, else retried with exponential backoff and
 * jitter until it has been pending 24 hours.
 *
 * `runOnce()` does one round (tests call it with a fake clock); `start()`
 * runs rounds until `stop()`.
 */
export class PushDeliveryService {
  readonly credential: PushCredential;
  private readonly fetch: typeof fetch;
  private readonly concurrency: number;
  private readonly requestTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly random: () => number;
  private readonly retryBaseSeconds: number;
  private readonly log: NonNullable<PushDeliveryOptions["log"]>;
  private readonly logoutRequest: PushDeliveryOptions["logoutRequest"];
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly inFlight = new Set<AbortController>();
  /** While the database is unreachable: one log line when that starts and one when it ends, and rounds further apart. */
  private readonly outage: OutageTracker;

  constructor(
    private readonly ctx: SignonContext,
    options: PushDeliveryOptions = {},
  ) {
    this.credential = new PushCredential(ctx);
    this.fetch = options.fetch ?? globalThis.fetch;
    this.concurrency = options.concurrency ?? 64;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.random = options.random ?? Math.random;
    this.retryBaseSeconds = (options.retryBaseMs ?? 5000) / 1000;
    this.log = options.log ?? { warn: () => undefined, error: () => undefined };
    this.logoutRequest = options.logoutRequest;
    const log = this.log;
    this.outage = new OutageTracker("push delivery", { info: (message) => (log.info ?? log.warn)(message), warn: (message) => log.warn(message) });
  }

  /** A lease outlives the request timeout, so a row is never sent twice at once by two live workers. */
  private get leaseSeconds(): number {
    return Math.ceil(this.requestTimeoutMs / 1000) * 2 + 5;
  }

  /**
   * Claims up to `limit` due pushes, sends them concurrently and records the
   * outcomes. Returns how many were attempted.
   */
  async runOnce(limit = this.concurrency): Promise<number> {
    const now = this.ctx.now();
    const claimed = await claimDuePushes(this.ctx.db, { limit, now, leaseSeconds: this.leaseSeconds, leaseToken: randomUUID() });
    if (claimed.length === 0) return 0;
    const updates = claimed.filter((push) => push.kind === "update");
    const bodies = await readUserJsonBodies(this.ctx.db, updates);
    const outcomes = await Promise.all(claimed.map((push) => this.deliver(push, bodies)));
    await finishPushes(this.ctx.db, outcomes, this.ctx.now());
    return claimed.length;
  }

  /**
   * Delivers until `stop()`: two lanes, each taking up to half of
   * `concurrency` pushes a round (so one lane sends while the other records),
   * going again at once while pushes are due, else waiting `pollIntervalMs`
   * or a `wake()`. While the database cannot be reached it logs that once,
   * waits longer between rounds (up to 2 s), and logs when it is back.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    const limit = Math.max(1, Math.floor(this.concurrency / 2));
    this.loop = Promise.all([this.lane(limit), this.lane(this.concurrency - limit || 1)]).then(() => undefined);
  }

  /** Wakes the loop now (pushes were just committed in this process). */
  wake(): void {
    for (const waiter of this.waiters) waiter();
    this.waiters.clear();
  }

  /** Stops taking pushes, aborts requests in flight (their rows are retried later) and waits for the loop. */
  async stop(): Promise<void> {
    this.running = false;
    for (const controller of this.inFlight) controller.abort(new Error("Sign-on is stopping"));
    this.wake();
    await this.loop;
  }

  private async lane(limit: number): Promise<void> {
    while (this.running) {
      let attempted = 0;
      try {
        attempted = await this.runOnce(limit);
        this.outage.succeeded();
      } catch (error) {
        if (!this.outage.failed(error)) this.log.error(`push delivery round failed: ${(error as Error).message}`);
      }
      if (attempted > 0 || !this.running) continue;
      const delayMs = this.outage.retryDelayMs(this.pollIntervalMs);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, delayMs);
        this.waiters.add(done);
      });
    }
  }

  private async deliver(push: ClaimedPush, bodies: Map<string, UserJsonBody>): Promise<PushOutcome> {
    let request: PushRequest;
    if (push.kind === "logout") {
      if (!push.backchannelLogoutUri) return this.outcome(push, "permanent", "the application no longer has a back-channel logout URI");
      if (!this.logoutRequest) return this.outcome(push, "permanent", "this process cannot sign logout tokens");
      try {
        request = await this.logoutRequest({ userUid: push.userUid, clientId: push.clientId, alg: push.idTokenAlg, backchannelLogoutUri: push.backchannelLogoutUri });
      } catch (error) {
        return this.outcome(push, "retry", `logout token: ${(error as Error).message}`);
      }
      return this.send(push, request);
    }
    try {
      const token = await this.credential.tokenFor(push.applicationId);
      if (push.kind === "update") {
        const body = bodies.get(`${push.userUid} ${push.applicationId}`);
        if (!body) return this.outcome(push, "permanent", "the user no longer exists");
        request = userUpdateRequest(push.pushBase, token, body);
      } else {
        request = reauthRequest(push.pushBase, token, push.userUid);
      }
    } catch (error) {
      return this.outcome(push, "retry", `push credential: ${(error as Error).message}`);
    }
    return this.send(push, request);
  }

  private async send(push: ClaimedPush, request: PushRequest): Promise<PushOutcome> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.requestTimeoutMs} ms`)), this.requestTimeoutMs);
    try {
      const response = await this.fetch(request.url, { ...request.init, signal: controller.signal });
      const text = await response.text().catch(() => "");
      const result = classifyStatus(response.status);
      if (response.status === 401 && push.kind !== "logout") this.credential.forget(push.applicationId);
      return this.outcome(push, result, result === "delivered" ? null : `HTTP ${response.status} ${text.slice(0, 200)}`.trim(), response.status);
    } catch (error) {
      const reason = controller.signal.aborted ? controller.signal.reason : error;
      return this.outcome(push, "retry", describe(reason), null);
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }

  /**
   * The outcome to record; a failed attempt is also logged. `status` is the
   * receiver's HTTP status, null when there was none (the push was not sent,
   * or no answer came).
   */
  private outcome(push: ClaimedPush, result: "delivered" | "permanent" | "retry", error: string | null, status: number | null = null): PushOutcome {
    const now = this.ctx.now();
    const base = { id: push.id, leaseToken: push.leaseToken, seq: push.seq, error };
    if (result === "delivered") return { ...base, status: "delivered", nextAttemptAt: now };
    const fields = {
      application: push.applicationName,
      uid: push.userUid,
      kind: push.kind,
      status,
      attempt: push.attempts,
      ...(status === null && error !== null ? { error } : {}),
    };
    const what = `push ${push.kind === "update" ? "PUT" : push.kind === "reauth" ? "reauth" : "back-channel logout"} to ${push.applicationName} for user ${push.userUid}, attempt ${push.attempts}`;
    const why = status === null ? (error ?? "not sent") : `HTTP ${status}`;
    if (result === "permanent") {
      this.log.error(`${what} failed for good: ${why}`, { ...fields, outcome: "failed" });
      return { ...base, status: "failed", nextAttemptAt: now };
    }
    if (retryWindowOver(push.pendingSince, now)) {
      this.log.error(`${what} failed: ${why}; given up after 24 hours of retries`, { ...fields, outcome: "failed" });
      return { ...base, status: "failed", nextAttemptAt: now, error: `gave up after ${push.attempts} attempts: ${error ?? ""}` };
    }
    const delay = retryDelaySeconds(push.attempts, this.random, this.retryBaseSeconds);
    const nextAttemptAt = new Date(now.getTime() + delay * 1000);
    this.log.warn(`${what} failed: ${why}; retrying in ${Math.round(delay)} s`, { ...fields, outcome: "retry", next_attempt_at: nextAttemptAt.toISOString() });
    return { ...base, status: "pending", nextAttemptAt };
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${(cause as Error & { code?: string }).code ?? cause.message}` : "";
    return `${error.message}${detail}`.slice(0, 500);
  }
  return String(error).slice(0, 500);
}
