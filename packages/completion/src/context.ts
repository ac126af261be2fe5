import type { CompletionConfig } from "./config.js";
import type { CallerResolver } from "./auth/caller.js";
import type { StaleSettings } from "./aggregation/stale.js";
import type { Database } from "./db/database.js";
import { CourseStructures } from "./domain/course-structures.js";

/** Everything the handlers and domain functions share: storage, caches, settings, the clock and the caller resolver. */
export interface CompletionContext {
  readonly db: Database;
  readonly structures: CourseStructures;
  readonly callers: CallerResolver;
  readonly settings: StaleSettings;
  readonly now: () => Date;
}

/** Builds the context of a service from its config and its outside services. */
export function createContext(
  config: Pick<CompletionConfig, "aggregatorTypes" | "rebuildStaleFromScratch">,
  db: Database,
  callers: CallerResolver,
  now: () => Date = () => new Date(),
): CompletionContext {
  return {
    db,
    structures: new CourseStructures(),
    callers,
    settings: { aggregatorTypes: new Set(config.aggregatorTypes), rebuildFromScratch: config.rebuildStaleFromScratch },
    now,
  };
}
