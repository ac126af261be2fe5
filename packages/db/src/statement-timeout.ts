import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import type pg from "pg";

/**
 * What one statement may take, by default, before its connection is given up
 * as stalled: 30 s. A network that silently drops packets (no reset, no FIN)
 * would otherwise hold a request until the kernel gives the TCP connection up,
 * which takes hours; with the bound, the statement fails as "database
 * unavailable" (a 503) and the pool opens a new connection for the next one.
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/** The bound set by {@link withStatementTimeout} for the work running inside it. */
const scoped = new AsyncLocalStorage<{ ms: number | null }>();

/** How many {@link withStatementTimeout} scopes are running now. */
let openScopes = 0;

/** The store of work that runs outside every scope while some scope is open: the pool's own bound. */
const poolBound = Object.freeze({ ms: null });

/**
 * Runs `work` with another bound on each of its statements than the pool's:
 * `ms` milliseconds, or none at all with `null`. For the long legitimate
 * operations (migrations, bulk imports, recomputations over every course):
 * every query `work` sends, through drizzle or `pg`, directly or after any
 * number of `await`s, gets this bound instead.
 *
 * ```ts
 * await withStatementTimeout(null, () => loadBulkData(db, …));
 * ```
 */
export async function withStatementTimeout<T>(ms: number | null, work: () => Promise<T>): Promise<T> {
  openScopes++;
  try {
    // Awaited inside: drizzle's queries are lazy, and run when awaited.
    return await scoped.run({ ms }, async () => await work());
  } finally {
    // On Node.js 20, an enabled AsyncLocalStorage makes every promise of the process about three times as
    // costly (its async hooks), so it is enabled only while some work runs inside a scope.
    if (--openScopes === 0) scoped.disable();
  }
}

/**
 * `callback`, to be called back later from whatever context (a pool checkout
 * that waited, called from another request's release or a new connection's
 * events), so that its statements keep the bound of the caller's context:
 * the caller's scope, or the pool's own bound for a caller outside every
 * scope, even when it is called back from inside one.
 */
export function inCallersStatementTimeout<A extends unknown[]>(callback: (...args: A) => void): (...args: A) => void {
  if (openScopes === 0) return (...args) => (openScopes === 0 ? callback(...args) : scoped.run(poolBound, callback, ...args));
  // A resource and runInAsyncScope rather than AsyncResource.bind, whose bound function costs far more to build.
  const caller = new AsyncResource("tessera.pool.connect");
  return (...args) => caller.runInAsyncScope(callback, undefined, ...args);
}

/** The error a statement gets when its connection was given up as stalled. */
export function statementTimeoutError(ms: number): Error {
  return Object.assign(new Error(`Query read timeout: no answer from the database within ${formatSeconds(ms)} s`), { code: "ETIMEDOUT" });
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

type QueryFunction = (...args: unknown[]) => unknown;
type Callback = (error: Error | null, result?: unknown) => void;

/**
 * Bounds every statement sent on `client` (a client of a pool, patched once
 * when it connects): when no answer has come `defaultMs` after it was sent
 * (or the bound of {@link withStatementTimeout} around the caller), the
 * connection is destroyed with {@link statementTimeoutError}. Every statement
 * on it then fails with that error, the client emits `error` (which the pool
 * listens for), and the pool drops it when it is released, so the next
 * checkout gets a new connection instead of the stalled one.
 *
 * Submittable queries (cursors, streams) are not bounded: they stay open as
 * long as their reader wants.
 */
export function boundStatements(client: pg.ClientBase, defaultMs: number | null): void {
  const original = client.query as unknown as QueryFunction;
  const bounded = function (this: pg.ClientBase, ...args: unknown[]): unknown {
    const context = scoped.getStore();
    const ms = context === undefined || context === poolBound ? defaultMs : context.ms;
    const first = args[0] as { submit?: unknown; callback?: unknown } | null | undefined;
    if (ms === null || ms <= 0 || typeof first?.submit === "function") return original.apply(this, args);
    const timer = setTimeout(() => giveUp(client, ms), ms);
    const done = () => clearTimeout(timer);
    const last = args.length - 1;
    if (typeof args[last] === "function") {
      const callback = args[last] as Callback;
      args[last] = (error: Error | null, result?: unknown) => {
        done();
        callback(error, result);
      };
      return original.apply(this, args);
    }
    if (typeof first === "object" && first !== null && typeof first.callback === "function") {
      const callback = first.callback as Callback;
      args[0] = {
        ...first,
        callback: (error: Error | null, result?: unknown) => {
          done();
          callback(error, result);
        },
      };
      return original.apply(this, args);
    }
    let result: unknown;
    try {
      result = original.apply(this, args);
    } catch (error) {
      done();
      throw error;
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === "function") (result as PromiseLike<unknown>).then(done, done);
    else done();
    return result;
  };
  (client as unknown as { query: QueryFunction }).query = bounded;
}

function giveUp(client: pg.ClientBase, ms: number): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy(error?: Error): void } } }).connection?.stream;
  stream?.destroy(statementTimeoutError(ms));
}
