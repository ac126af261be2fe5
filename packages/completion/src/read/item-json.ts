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

/** JSON bytes to be written into a larger body: their length first, then the bytes at a position. */
export interface JsonPiece {
  readonly byteLength: number;
  /** Writes the bytes into `target` from `at`; returns the position after them. */
  writeTo(target: Buffer, at: number): number;
}

/** A piece as a Buffer of its own. */
export function jsonBytes(piece: JsonPiece): Buffer {
  const bytes = Buffer.allocUnsafe(piece.byteLength);
  piece.writeTo(bytes, 0);
  return bytes;
}

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
  /** The length of the fixed bytes: the head, each list's opening, entry openings and closing, and the closing brace. */
  readonly fixedLength: number;
}

const texts = new WeakMap<ItemShape, ItemText>();

function itemText(courseKey: string, shape: ItemShape): ItemText {
  let text = texts.get(shape);
  if (!text) {
    const course = JSON.stringify(courseKey);
    const lists = [...shape.lists].map(([type, nodes]) => ({
      open: Buffer.from(`,${JSON.stringify(type)}:[`),
      nodes,
      entryHeads: nodes.map((node, at) => {
        const key = JSON.stringify(node.key);
        return Buffer.from(`${at === 0 ? "" : ","}{"course_key":${course},"block_key":${key},"usage_key":${key},"completion":`);
      }),
    }));
    const head = Buffer.from(`{"course_key":${course},"completion":`);
    const listsLength = lists.reduce((sum, list) => sum + list.open.length + LIST_CLOSE.length + list.entryHeads.reduce((heads, entryHead) => heads + entryHead.length, 0), 0);
    text = { head, lists, fixedLength: head.length + listsLength + ITEM_CLOSE.length };
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

/** Completion dictionaries as bytes, each followed by the same text, by possible then earned; bounded. */
class DictionaryBytes {
  static readonly MOST = 20_000;
  readonly #byPossible = new Map<number, Map<number, Buffer>>();
  #count = 0;

  constructor(private readonly suffix: string) {}

  get(progress: Progress): Buffer {
    let byEarned = this.#byPossible.get(progress.possible);
    let bytes = byEarned?.get(progress.earned);
    if (bytes === undefined) {
      bytes = Buffer.from(`${completionText(progress)}${this.suffix}`);
      if (this.#count >= DictionaryBytes.MOST) {
        this.#byPossible.clear();
        this.#count = 0;
        byEarned = undefined;
      }
      if (!byEarned) {
        byEarned = new Map();
        this.#byPossible.set(progress.possible, byEarned);
      }
      byEarned.set(progress.earned, bytes);
      this.#count += 1;
    }
    return bytes;
  }
}

/** The bytes that end a block entry with some progress: its completion dictionary and `}`. */
const entryEnds = new DictionaryBytes("}");
/** The bytes of an item's own completion dictionary. */
const itemCompletions = new DictionaryBytes("");

/** A block's progress: the learner's, or none completed. (Not a closure per item: this runs for every entry.) */
function progressOf(structure: CourseStructure, progress: ReadonlyMap<string, Progress> | undefined, node: TreeNode): Progress {
  return progress?.get(node.key) ?? structure.noProgress.get(node.key)!;
}

const UNKNOWN_STRUCTURE = Buffer.from('{"earned":0,"possible":null,"percent":0,"ratio":0}');
const LIST_CLOSE = Buffer.from("]");
const ITEM_CLOSE = Buffer.from("}");

/**
 * One course item as JSON bytes, from a learner's progress by block key (a
 * block without progress there has completed nothing): `course_key`,
 * `completion`, then `username` and `mean` when given, then each type list of
 * the shape. Nothing is assembled until the page's body is: the item holds
 * its progress and the one part of its text that is its own, and writes the
 * shared pieces straight into the body.
 */
export function itemJson(
  structure: CourseStructure,
  shape: ItemShape,
  progress: ReadonlyMap<string, Progress> | undefined,
  extras: { username?: string; mean?: number },
): JsonPiece {
  const text = itemText(structure.course.key, shape);
  const completion = shape.root ? itemCompletions.get(progressOf(structure, progress, shape.root)) : UNKNOWN_STRUCTURE;
  let own = "";
  if (extras.username !== undefined) own += `,"username":${JSON.stringify(extras.username)}`;
  if (extras.mean !== undefined) own += `,"mean":${jsonNumber(extras.mean)}`;
  return new ItemJson(structure, text, completion, own, progress);
}

class ItemJson implements JsonPiece {
  readonly byteLength: number;

  constructor(
    private readonly structure: CourseStructure,
    private readonly text: ItemText,
    /** The item's completion dictionary. */
    private readonly completion: Buffer,
    /** `username` and `mean`, the text no other item shares. */
    private readonly own: string,
    private readonly progress: ReadonlyMap<string, Progress> | undefined,
  ) {
    let length = text.fixedLength + completion.length + Buffer.byteLength(own);
    for (const list of text.lists) for (const node of list.nodes) length += entryEnds.get(progressOf(structure, progress, node)).length;
    this.byteLength = length;
  }

  writeTo(target: Buffer, start: number): number {
    const { structure, text, progress } = this;
    let at = start + text.head.copy(target, start);
    at += this.completion.copy(target, at);
    if (this.own !== "") at += target.write(this.own, at);
    for (const list of text.lists) {
      at += list.open.copy(target, at);
      const { nodes, entryHeads } = list;
      for (let entry = 0; entry < nodes.length; entry += 1) {
        at += entryHeads[entry]!.copy(target, at);
        at += entryEnds.get(progressOf(structure, progress, nodes[entry]!)).copy(target, at);
      }
      at += LIST_CLOSE.copy(target, at);
    }
    return at + ITEM_CLOSE.copy(target, at);
  }
}
