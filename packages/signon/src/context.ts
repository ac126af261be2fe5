import type { SignonConfig } from "./config.js";
import type { SignonDatabase } from "./db/database.js";
import type { StatementRunner } from "./db/statements.js";
import type { TokenAnswerCache } from "./oauth/token-answer-cache.js";

/** What domain functions need: the database, the configuration and the clock. */
export interface SignonContext {
  db: SignonDatabase;
  /** Fixed statements of the hot paths (`/token`, `/user.json`), prepared on PostgreSQL. */
  statements: StatementRunner;
  config: SignonConfig;
  /** Access-token answers kept in memory between changes (the app's own; none elsewhere). */
  tokenAnswers?: TokenAnswerCache | undefined;
  /** The current time; tests pass a clock they can move. */
  now: () => Date;
  /** Called after a change has committed pushes to the outbox: wakes this process's delivery worker. */
  pushesQueued?: (() => void) | undefined;
  /** Called after a batch of invitations was stored: wakes this process's batch invitation worker. */
  invitationBatchesQueued?: (() => void) | undefined;
  /**
   * The key that seals authenticator secrets, resolved once at start-up (the
   * configured key, or the development key file); `config.secretKey` when unset.
   */
  secretKey?: Buffer | undefined;
  /**
   * The context for one read that tolerates a little lag (the administrator
   * lists, `users.csv`, the usage pages): `db` and `statements` on a replica
   * within `DATABASE_READ_MAX_LAG_MS` of the primary that holds the reader's
   * own recent change, if any, or on the primary. Never for sessions,
   * tokens, authorization, limits, or what follows a write.
   */
  forRead?: ((ownChange?: OwnChange) => SignonContext) | undefined;
}

/**
 * A change the reader made a moment ago, which their next lists must show:
 * `after`, the primary's WAL position once the change had committed (a
 * replica that has replayed that far holds it), or `null` where that is not
 * known (the primary reads).
 */
export interface OwnChange {
  after: bigint | null;
}

/**
 * `ctx.forRead(ownChange)`, or `ctx` itself where no replica is configured.
 */
export function readingContext(ctx: SignonContext, ownChange?: OwnChange): SignonContext {
  return ctx.forRead?.(ownChange) ?? ctx;
}

/** Where a request came from, for audit events and per-IP limits. */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
}
