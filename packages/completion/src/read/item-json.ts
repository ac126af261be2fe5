import { percentOf, type Progress } from "../aggregation/completion-math.js";
import type { CourseStructure } from "../domain/course-structures.js";
import type { TreeNode } from "../domain/course-tree.js";
import type { ItemShape } from "./course-items.js";

/**
 * Writes course items (C3, C8) as JSON bytes straight from a shape and a
 * learner's figures. A detail page holds hundreds of block entries; building
 * each as an object and serialising it, or joining hundreds of small strings,
 * costs more than the database query that fetched the figures. Instead the
 * fixed text of a shape (keys, names, punctuation) is encoded once, the
 * completion dictionaries (a handful of distinct figures in practice) are
 * encoded once each, and an item is a list of those pieces, copied once
 * into the body of the page.
 */

/** The JSON bytes of one item, in pieces (shared, never to be written to) that follow one another. */
export type ItemChunks = readonly Buffer[];

/** The fixed bytes of an item of one shape: its opening, then per type list its opening and each entry's opening. */
interface ItemText {
  /** `{"course_key":…,"completion":` */
  readonly head: Buffer;
  readonly lists: readonly {
    /** `,"chapter":[` */
    readonly open: Buffer;
    readonly nodes: readonly TreeNode[];
    /** `{"course_key":…,"block_key":…,"usage_key":…,"completion":`, with a leading comma after the first. */
    readonly entryHeads: readonly Buffer[];
  }[];
}

const texts = new WeakMap<ItemShape, ItemText>();

function itemText(courseKey: string, shape: ItemShape): ItemText {
  let text = texts.get(shape);
  if (!text) {
    const course = JSON.stringify(courseKey);
    text = {
      head: Buffer.from(`{"course_key":${course},"completion":`),
      lists: [...shape.lists].map(([type, nodes]) => ({
        open: Buffer.from(`,${JSON.stringify(type)}:[`),
        nodes,
        entryHeads: nodes.map((node, at) => {
          const key = JSON.stringify(node.key);
          return Buffer.from(`${at === 0 ? "" : ","}{"course_key":${course},"block_key":${key},"usage_key":${key},"completion":`);
        }),
      })),
    };
    texts.set(shape, text);
  }
  return text;
}

/** A number as JSON writes it (a non-finite one, which no figure is, as null). */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : "null";
}

/** The JSON text of a completion dictionary (C2): `ratio` and `percent` are the same number. */
export function completionText(progress: Progress): string {
  const percent = jsonNumber(percentOf(progress));
  return `{"earned":${jsonNumber(progress.earned)},"possible":${jsonNumber(progress.possible)},"percent":${percent},"ratio":${percent}}`;
}

/** Encoded block-entry endings (completion dictionary and closing brace) by possible, then earned; bounded. */
const entryEnds = new Map<number, Map<number, Buffer>>();
const MOST_ENTRY_ENDS = 20_000;
let entryEndCount = 0;

/** The bytes that end a block entry with this progress: its completion dictionary and `}`. */
function entryEnd(progress: Progress): Buffer {
  let byEarned = entryEnds.get(progress.possible);
  let end = byEarned?.get(progress.earned);
  if (end === undefined) {
    end = Buffer.from(`${completionText(progress)}}`);
    if (entryEndCount >= MOST_ENTRY_ENDS) {
      entryEnds.clear();
      entryEndCount = 0;
      byEarned = undefined;
    }
    if (!byEarned) {
      byEarned = new Map();
      entryEnds.set(progress.possible, byEarned);
    }
    byEarned.set(progress.earned, end);
    entryEndCount += 1;
  }
  return end;
}

/** A block's progress: the learner's, or none completed. (Not a closure per item: this runs for every entry.) */
function progressOf(structure: CourseStructure, progress: ReadonlyMap<string, Progress> | undefined, node: TreeNode): Progress {
  return progress?.get(node.key) ?? structure.noProgress.get(node.key)!;
}

const UNKNOWN_STRUCTURE = Buffer.from('{"earned":0,"possible":null,"percent":0,"ratio":0}');
const LIST_CLOSE = Buffer.from("]");
const ITEM_CLOSE = Buffer.from("}");

/**
 * The JSON bytes of one course item, in pieces, from a learner's progress by block key
 * (a block without progress there has completed nothing): `course_key`,
 * `completion`, then `username` and `mean` when given, then each type list
 * of the shape.
 */
export function itemJson(
  structure: CourseStructure,
  shape: ItemShape,
  progress: ReadonlyMap<string, Progress> | undefined,
  extras: { username?: string; mean?: number },
): ItemChunks {
  const text = itemText(structure.course.key, shape);
  let middle = shape.root ? completionText(progressOf(structure, progress, shape.root)) : "";
  if (extras.username !== undefined) middle += `,"username":${JSON.stringify(extras.username)}`;
  if (extras.mean !== undefined) middle += `,"mean":${jsonNumber(extras.mean)}`;
  const chunks: Buffer[] = [text.head];
  if (!shape.root) chunks.push(UNKNOWN_STRUCTURE);
  chunks.push(Buffer.from(middle));
  for (const list of text.lists) {
    chunks.push(list.open);
    const { nodes, entryHeads } = list;
    for (let at = 0; at < nodes.length; at += 1) chunks.push(entryHeads[at]!, entryEnd(progressOf(structure, progress, nodes[at]!)));
    chunks.push(LIST_CLOSE);
  }
  chunks.push(ITEM_CLOSE);
  return chunks;
}
