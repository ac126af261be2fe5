import type pg from "pg";
import { connectionTls } from "./connection-tls.js";
import { describeDatabaseError, isDatabaseUnavailable } from "./faults.js";
import { silentLogger, type Logger } from "./logger.js";
import { createPool } from "./pool.js";

/** How far behind the primary a replica may be and still serve reads, by default (`DATABASE_READ_MAX_LAG_MS`). */
export const DEFAULT_READ_MAX_LAG_MS = 5000;

/** How often each replica's position, and the primary's, is read by default. */
export const DEFAULT_LAG_CHECK_INTERVAL_MS = 1000;

/**
 * What a read on a replica waits at most, by default, for a connection and
 * then for its statement's answer (`DATABASE_READ_TIMEOUT_MS`): past it the
 * replica is taken for frozen or cut off, skipped, and the read is asked of
 * the primary.
 */
export const DEFAULT_READ_TIMEOUT_MS = 2000;

/** A replica that reads may be sent to, as the router last saw it. */
export interface ReadReplicaState {
  /** The replica's address without its password (`host:port/database`): the metrics' label. */
  name: string;
  /** Milliseconds of the primary's history that the replica has not replayed yet; `null` before the first check or while it cannot be reached. */
  lagMs: number | null;
  /** Whether its last check answered. */
  reachable: boolean;
}

/** Options of {@link ReadRouter}. */
export interface ReadRouterOptions {
  primary: pg.Pool;
  /**
   * One pool per replica, with the address it was made for (see
   * {@link createReadReplicaPool}). The router watches the reads sent through
   * each: it wraps the pool's `query` and `connect`, so that a read that
   * fails there because the replica could not be reached, or gave no answer
   * in time, marks the replica unreachable at once and is asked of the
   * primary instead.
   */
  replicas: readonly { url: string; pool: pg.Pool }[];
  /** A replica further behind than this is skipped (default {@link DEFAULT_READ_MAX_LAG_MS}). */
  maxLagMs?: number;
  /** Default {@link DEFAULT_LAG_CHECK_INTERVAL_MS}. */
  checkIntervalMs?: number;
  /**
   * A check of a server that has not answered after this long has failed
   * (default twice the interval): a replica that hangs is skipped, and holds
   * up no other's check.
   */
  checkTimeoutMs?: number;
  log?: Logger;
  /** The clock, for tests. */
  now?: () => number;
}

/** The primary's write position at one moment: what a replica must have replayed to hold everything written until then. */
interface PrimarySample {
  at: number;
  lsn: bigint;
}

/** A replica's pool, what its last check found, and how many reads went to it. */
interface Replica {
  pool: pg.Pool;
  /** The pool's own `query`, unwatched: the lag checks' (a check that fails must not be asked of the primary). */
  check: (text: string) => Promise<pg.QueryResult>;
  state: ReadReplicaState;
  /** The WAL position it had replayed at its last check; `everything` when it is not recovering (promoted). */
  replayed: bigint | "everything" | null;
  routed: number;
  /** Reads that failed on it (unreachable, no answer in time) and were asked of the primary instead. */
  retriedOnPrimary: number;
  /** Its failures for the log: a refusal over TLS names its server and `DATABASE_READ_URL`. */
  describe: (error: unknown) => string;
}

/** Where one read may go (see {@link ReadRouter.pool}). */
export interface ReadTarget {
  /** Only the primary: the read follows its reader's change, and where that change is in the WAL is not known. */
  primary?: boolean;
  /**
   * The read must see everything the primary had written at this WAL position
   * (its reader's change, from {@link ReadRouter.writePosition}): a replica
   * that had not replayed that far at its last check is skipped, and so is a
   * server that is not recovering.
   */
  after?: bigint;
}

/** How many of the primary's positions are kept: at one a second, enough to measure a lag far past any limit. */
const keptSamples = 600;

/**
 * Sends reads that tolerate a little lag to replicas that are close enough
 * to the primary, and every other read to the primary.
 *
 * Lag is measured from write positions: every `checkIntervalMs` the router
 * reads the primary's current WAL position (`pg_current_wal_lsn()`) and each
 * replica's replayed position (`pg_last_wal_replay_lsn()`). A replica's lag is
 * the age of the oldest primary position it has not replayed yet: 0 when it
 * has replayed everything the primary had at the last check, however long
 * since the last write (unlike `now() - pg_last_xact_replay_timestamp()`,
 * which grows while nothing is written), and growing when it stops replaying
 * while the primary goes on writing, even if its connection to the primary
 * is lost. A server that is not in recovery (a replica promoted by a
 * failover) has no lag.
 *
 * While the primary cannot be reached its position is not sampled, so the
 * replicas keep the lag of the last check and go on serving reads; a replica
 * that cannot be reached, or was never checked, is skipped. With no replica
 * fit to serve, reads go to the primary.
 *
 * A replica is also skipped at once when a read sent to it fails because its
 * connection failed or it gave no answer in time (a frozen or cut-off server:
 * the pool's bounds of {@link createReadReplicaPool} make that a matter of
 * seconds), until a later check finds it answering; that read is asked of
 * the primary, so its caller sees only the delay. Reads on a replica are
 * reads only, and they see the primary's data no older than the replica's,
 * so asking the primary again is always safe.
 */
export class ReadRouter {
  readonly #primary: pg.Pool;
  readonly #replicas: Replica[];
  readonly #maxLagMs: number;
  readonly #checkTimeoutMs: number;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #samples: PrimarySample[] = [];
  #routedToPrimary = 0;
  #next = 0;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;

  constructor(options: ReadRouterOptions) {
    this.#primary = options.primary;
    this.#replicas = options.replicas.map(({ url, pool }) => {
      const replica: Replica = {
        pool,
        check: pool.query.bind(pool) as Replica["check"],
        state: { name: replicaName(url), lagMs: null, reachable: false },
        replayed: null,
        routed: 0,
        retriedOnPrimary: 0,
        describe: replicaErrorDescriber(url),
      };
      this.#watchReads(replica);
      return replica;
    });
    this.#maxLagMs = options.maxLagMs ?? DEFAULT_READ_MAX_LAG_MS;
    this.#checkTimeoutMs = options.checkTimeoutMs ?? 2 * (options.checkIntervalMs ?? DEFAULT_LAG_CHECK_INTERVAL_MS);
    this.#log = options.log ?? silentLogger;
    this.#now = options.now ?? Date.now;
    if (this.#replicas.length > 0) {
      const interval = options.checkIntervalMs ?? DEFAULT_LAG_CHECK_INTERVAL_MS;
      this.#timer = setInterval(() => void this.check(), interval);
      this.#timer.unref();
      void this.check();
    }
  }

  /** Whether any replica is configured. */
  get hasReplicas(): boolean {
    return this.#replicas.length > 0;
  }

  /**
   * The pool for one read that tolerates lag: the next of the replicas
   * within the limit, in turn, or the primary when none is. A read that
   * follows its reader's own change goes to a replica that has replayed it
   * (`after`), or, where its position is not known (`primary`), to the
   * primary, counted as routed there.
   */
  pool(target: ReadTarget = {}): pg.Pool {
    if (target.primary === true) {
      this.#routedToPrimary++;
      return this.#primary;
    }
    const count = this.#replicas.length;
    for (let tried = 0; tried < count; tried++) {
      const replica = this.#replicas[(this.#next + tried) % count] as Replica;
      if (this.#canServe(replica, target.after)) {
        this.#next = (this.#next + tried + 1) % count;
        replica.routed++;
        return replica.pool;
      }
    }
    this.#routedToPrimary++;
    return this.#primary;
  }

  /**
   * The primary's WAL position now (`pg_current_wal_insert_lsn()`): read
   * after a change has committed, everything a replica must have replayed to
   * hold it. `null` when the primary does not answer.
   */
  async writePosition(): Promise<bigint | null> {
    try {
      const { rows } = await this.#primary.query<{ lsn: string }>("select pg_current_wal_insert_lsn()::text as lsn");
      return parseLsn((rows[0] as { lsn: string }).lsn);
    } catch {
      return null;
    }
  }

  /** Each replica as last checked. */
  replicas(): readonly ReadReplicaState[] {
    return this.#replicas.map(({ state }) => ({ ...state }));
  }

  /** Reads sent to each target since the start: `primary` and each replica's name. */
  routed(): ReadonlyMap<string, number> {
    return new Map([["primary", this.#routedToPrimary], ...this.#replicas.map(({ state, routed }): [string, number] => [state.name, routed])]);
  }

  /** Reads that failed on each replica (by its name) because it could not be reached or gave no answer in time, and were asked of the primary instead. */
  retriedOnPrimary(): ReadonlyMap<string, number> {
    return new Map(this.#replicas.map(({ state, retriedOnPrimary }): [string, number] => [state.name, retriedOnPrimary]));
  }

  /** Reads the primary's position, then each replica's; one check at a time. */
  check(): Promise<void> {
    this.#checking ??= this.#checkAll().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /** Stops checking. The pools are the caller's to end. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #canServe(replica: Replica, after: bigint | undefined): boolean {
    const { state, replayed } = replica;
    if (!state.reachable || state.lagMs === null || state.lagMs > this.#maxLagMs) return false;
    if (after === undefined) return true;
    // A server no longer recovering (promoted) has its own history: whether it holds a change written through the
    // primary's address is not known, so such a read waits for the primary (which it is, after a failover).
    return typeof replayed === "bigint" && replayed >= after;
  }

  async #checkAll(): Promise<void> {
    await this.#samplePrimary();
    await Promise.all(this.#replicas.map((replica) => this.#checkReplica(replica)));
  }

  async #samplePrimary(): Promise<void> {
    try {
      // On a standby (the primary's address not yet following a failover) this fails, and no sample is taken.
      const { rows } = await this.#answerWithin(this.#primary.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn"));
      const lsn = parseLsn((rows[0] as { lsn: string }).lsn);
      this.#samples.push({ at: this.#now(), lsn });
      if (this.#samples.length > keptSamples) this.#samples.shift();
    } catch {
      // The primary's own outage is reported by its pool; the replicas keep their last lag meanwhile.
    }
  }

  async #checkReplica(replica: Replica): Promise<void> {
    const { state } = replica;
    try {
      const { rows } = await this.#answerWithin(replica.check("select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as lsn"));
      const row = rows[0] as { recovering: boolean; lsn: string | null };
      replica.replayed = !row.recovering ? "everything" : row.lsn === null ? null : parseLsn(row.lsn);
      const lagMs = replica.replayed === "everything" ? 0 : replica.replayed === null ? null : this.#lagOf(replica.replayed);
      if (!state.reachable) this.#log.info(`database: read replica ${state.name} answers${lagMs === null ? "" : ` (${lagMs} ms behind)`}`);
      state.reachable = true;
      state.lagMs = lagMs;
    } catch (error) {
      this.#unreachable(replica, error);
    }
  }

  /** Skips `replica` until a check finds it answering; logs once, when it was serving. */
  #unreachable(replica: Replica, error: unknown): void {
    const { state } = replica;
    if (state.reachable) this.#log.warn(`database: read replica ${state.name} cannot be reached (${replica.describe(error)}); reads go elsewhere until it answers`);
    state.reachable = false;
    state.lagMs = null;
    replica.replayed = null;
  }

  /**
   * Wraps the replica pool's `query` and `connect` (promise forms; a callback
   * or a cursor is passed on as it is): a read that fails because the replica
   * could not be reached or gave no answer in time marks it unreachable and
   * is asked of the primary, once.
   */
  #watchReads(replica: Replica): void {
    const pool = replica.pool as unknown as { query: Call; connect?: Call };
    const query = pool.query.bind(pool);
    pool.query = (...args) => {
      if (!promised(args)) return query(...args);
      return (query(...args) as Promise<unknown>).catch((error: unknown) => this.#readFailed(replica, error, () => (this.#primary.query as unknown as Call)(...args)));
    };
    if (typeof pool.connect !== "function") return;
    const connect = pool.connect.bind(pool);
    pool.connect = (...args) => {
      if (args.length > 0) return connect(...args);
      return (connect() as Promise<unknown>).catch((error: unknown) => this.#readFailed(replica, error, () => this.#primary.connect()));
    };
  }

  /** The primary's answer to a read that failed on `replica` as a frozen or lost server fails; any other failure as it is. */
  #readFailed(replica: Replica, error: unknown, onPrimary: () => unknown): unknown {
    // 25006 (a write refused as read-only) is the caller's mistake, not the replica's absence; once stopped, the pools are ending.
    if (!isDatabaseUnavailable(error) || (error as { code?: unknown }).code === "25006" || this.#timer === undefined) throw error;
    this.#unreachable(replica, error);
    replica.retriedOnPrimary++;
    return onPrimary();
  }

  /** `answer`, or a failure once the check's time is up (the query itself goes on, and its end is ignored). */
  #answerWithin<T>(answer: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.#checkTimeoutMs} ms`)), this.#checkTimeoutMs);
    });
    answer.catch(() => undefined);
    return Promise.race([answer, timedOut]).finally(() => clearTimeout(timer));
  }

  /** The age of the oldest primary position after `replayed`; 0 when there is none. */
  #lagOf(replayed: bigint): number | null {
    const missing = this.#samples.find((sample) => sample.lsn > replayed);
    if (missing !== undefined) return Math.max(0, this.#now() - missing.at);
    // Before the primary's first sample nothing is known of how far behind it is.
    return this.#samples.length === 0 ? null : 0;
  }
}

type Call = (...args: unknown[]) => unknown;

/** Whether a `pg` call returns a promise: neither a callback nor a submittable query (a cursor, a stream) is given. */
function promised(args: unknown[]): boolean {
  if (typeof args[args.length - 1] === "function") return false;
  const first = args[0] as { submit?: unknown; callback?: unknown } | null | undefined;
  return typeof first !== "object" || first === null || (typeof first.submit !== "function" && typeof first.callback !== "function");
}

/** Options of {@link createReadReplicaPool}. */
export interface ReadReplicaPoolOptions {
  /** The replica's connection string, one of `DATABASE_READ_URL`'s. */
  url: string;
  /** Most connections (default 10). */
  max?: number;
  log?: Logger;
  /**
   * `DATABASE_READ_TIMEOUT_MS` (default {@link DEFAULT_READ_TIMEOUT_MS}): a
   * checkout that has no connection after this long fails, and so does a
   * statement with no answer after this long (its connection is given up).
   */
  timeoutMs?: number;
}

/**
 * A pool for a read replica: `createPool`'s, with both its connection and its
 * statement bound at `timeoutMs`, so that a read on a frozen server (a paused
 * machine, SIGSTOP: its kernel accepts connections, nothing answers) fails
 * within seconds rather than the primary's 30 s statement bound. The reads
 * routed to replicas are short; a longer one is asked of the primary after
 * the bound (see {@link ReadRouter}).
 */
export function createReadReplicaPool(options: ReadReplicaPoolOptions): pg.Pool {
  const timeoutMs = options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
  return createPool({
    url: options.url,
    setting: "DATABASE_READ_URL",
    max: options.max ?? 10,
    connectionTimeoutMs: timeoutMs,
    statementTimeoutMs: timeoutMs,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
}

/** How the failures of the replica at `url` are told in the log. */
function replicaErrorDescriber(url: string): (error: unknown) => string {
  const tls = connectionTls(url);
  const context = { server: tls.server, setting: "DATABASE_READ_URL", rootCert: tls.rootCert };
  return (error) => describeDatabaseError(error, context);
}

/** A WAL position (`16/B374D848`) as a number. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split("/");
  return (BigInt(`0x${high ?? "0"}`) << 32n) + BigInt(`0x${low ?? "0"}`);
}

/** A WAL position as PostgreSQL writes it (`16/B374D848`): the inverse of {@link parseLsn}. */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** `host:port/database` of a connection string, without its user or password. */
export function replicaName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}${parsed.port === "" ? "" : `:${parsed.port}`}${parsed.pathname}`;
  } catch {
    return "replica";
  }
}

/**
 * `DATABASE_READ_URL`: one or more connection strings, separated by spaces or
 * by commas before the next `postgres://`; empty when absent.
 */
export function parseReadUrls(value: string | undefined): string[] {
  return (value ?? "")
    .split(/\s+|,(?=\s*postgres(?:ql)?:\/\/)/)
    .map((url) => url.trim())
    .filter((url) => url !== "");
}
