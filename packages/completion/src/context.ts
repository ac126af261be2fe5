import type { CompletionConfig } from "./config.js";
import type { CallerResolver } from "./auth/caller.js";
import type { StaleSettings } from "./aggregation/stale.js";
import type { Database } from "./db/database.js";
import { CourseStructures } from "./domain/course-structures.js";
import { FixedStatements } from "./repositories/fixed-statements.js";

/** Everything the handlers and domain functions share: storage, caches, settings, the clock and the caller resolver. */
export interface CompletionContext {
  readonly db: Database;
  /** The hot read queries, as fixed (on PostgreSQL, prepared) statements on the same pool. */
  readonly statements: FixedStatements;
  readonly structures: CourseStructures;
  readonly callers: CallerResolver;
  readonly settings: StaleSettings;
  readonly now: () => Date;
}

/** Builds the context of a service from its config and its outside services. */
export function createContext(
  config: Pick<CompletionConfig, "aggregatorTypes" | "rebuildStaleFromScratch"> & { readonly preparedStatements?: boolean },
  db: Database,
  callers: CallerResolver,
  now: () => Date = () => new Date(),
): CompletionContext {
  return {
    db,
    statements: new FixedStatements(db, config.preparedStatements ?? false),
    structures: new CourseStructures(),
    callers,
    settings: { aggregatorTypes: new Set(config.aggregatorTypes), rebuildFromScratch: config.rebuildStaleFromScratch },
    now,
  };
}
