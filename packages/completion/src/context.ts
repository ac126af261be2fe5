import type { CompletionConfig } from "./config.js";
import type { CallerResolver } from "./auth/caller.js";
import type { StaleSettings } from "./aggregation/stale.js";
import type { Database } from "./db/database.js";
import { CourseStructures } from "./domain/course-structures.js";
import { FixedStatements } from "./repositories/fixed-statements.js";

/** Everything the handlers and domain functions share: storage, caches, settings, the clock and the caller resolver. */
export interface CompletionContext {
  /** Where this context reads: the primary, or (in a context of `forRead`) a replica close enough to it. */
  readonly db: Database;
  /** The hot read queries, as fixed (on PostgreSQL, prepared) statements on `db`'s pool. */
  readonly statements: FixedStatements;
  /** The primary: every write, and every read that follows a write of the same request. */
  readonly primary: Database;
  readonly structures: CourseStructures;
  readonly callers: CallerResolver;
  readonly settings: StaleSettings;
  readonly now: () => Date;
  /**
   * The context for one read that tolerates a little lag (the list, detail
   * and stats routes): `db` and `statements` on a replica within
   * `DATABASE_READ_MAX_LAG_MS` of the primary, or on the primary when no
   * replica is configured or fit. One request keeps the one it got, so its
   * reads see one server.
   */
  forRead(): CompletionContext;
}

/**
 * Builds the context of a service from its config and its outside services.
 * `readDb` gives the database for each read that tolerates lag (see
 * `startDatabase`'s `readDb`); without it the primary serves every read.
 */
export function createContext(
  config: Pick<CompletionConfig, "aggregatorTypes" | "rebuildStaleFromScratch"> & { readonly preparedStatements?: boolean },
  db: Database,
  callers: CallerResolver,
  now: () => Date = () => new Date(),
  readDb: () => Database = () => db,
): CompletionContext {
  const prepared = config.preparedStatements ?? false;
  const shared = {
    primary: db,
    structures: new CourseStructures(),
    callers,
    settings: { aggregatorTypes: new Set(config.aggregatorTypes), rebuildFromScratch: config.rebuildStaleFromScratch },
    now,
  };
  // One context per database, made once: a read costs no allocation to pick its server.
  const contexts = new Map<Database, CompletionContext>();
  const contextOn = (on: Database): CompletionContext => {
    let context = contexts.get(on);
    if (context === undefined) {
      context = { ...shared, db: on, statements: new FixedStatements(on, prepared), forRead: () => contextOn(readDb()) };
      contexts.set(on, context);
    }
    return context;
  };
  return contextOn(db);
}
