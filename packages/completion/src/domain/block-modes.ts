/**
 * Block modes (decision C16): how a block takes part in completion.
 * - `aggregator`: sums its children (course, chapter, sequential, vertical,
 *   library_content, split_test, conditional);
 * - `excluded`: it and its whole subtree count 0 of 0 (discussion);
 * - `completable`: earns its completion value out of 1 (every other type).
 */
export type BlockMode = "aggregator" | "excluded" | "completable";

export const BLOCK_MODES: readonly BlockMode[] = ["aggregator", "excluded", "completable"];

const AGGREGATING_TYPES: ReadonlySet<string> = new Set([
  "course",
  "chapter",
  "sequential",
  "vertical",
  "library_content",
  "split_test",
  "conditional",
]);

const EXCLUDED_TYPES: ReadonlySet<string> = new Set(["discussion"]);

/** The mode of a block: its explicit mode when it carries one, else the default for its type. */
export function blockMode(type: string, explicit?: BlockMode | null): BlockMode {
  if (explicit) return explicit;
  if (AGGREGATING_TYPES.has(type)) return "aggregator";
  if (EXCLUDED_TYPES.has(type)) return "excluded";
  return "completable";
}

/** Whether a block of this type holds child blocks in an OLX export (containers do; leaves hold content). */
export function isContainerType(type: string): boolean {
  return AGGREGATING_TYPES.has(type);
}
