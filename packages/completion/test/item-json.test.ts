import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aggregateTree } from "../src/aggregation/aggregate-tree.js";
import { completionDictionary, UNKNOWN_STRUCTURE_COMPLETION, type Progress } from "../src/aggregation/completion-math.js";
import { blockMode } from "../src/domain/block-modes.js";
import type { CourseStructure } from "../src/domain/course-structures.js";
import { buildCourseTree, type BlockRecord, type TreeNode } from "../src/domain/course-tree.js";
import { parseCourseKey } from "../src/domain/keys.js";
import { pageEnvelope, pageEnvelopeJson, pageWindow } from "../src/http/paging.js";
import { itemShape } from "../src/read/course-items.js";
import { itemJson, jsonBytes } from "../src/read/item-json.js";

/**
 * The hand-written JSON of items and page envelopes must be byte for byte
 * what JSON.stringify writes for the same object, whatever the strings in it:
 * course keys, block keys, usernames and URLs with quotes, backslashes,
 * control characters, line separators, astral characters and lone surrogates.
 */

const TRICKY = ['"', "\\", "\u0000", "\u001f", "\b", "\f", "\n", "\r", "\t", "\u007f", "\u2028", "\u2029", "\ud800", "\udfff", "😀", "é", "</script>", "/"];

/** Strings mixing every kind of character, with the ones JSON escapes made likely. */
const text = fc
  .array(fc.oneof(fc.constantFrom(...TRICKY), fc.string({ unit: "binary", maxLength: 4 })), { maxLength: 8 })
  .map((parts) => parts.join(""));

/** Finite figures, with the edge cases of number formatting. */
const figure = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1, 0.1, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, 39.199999999999996),
);

const TYPES = ["chapter", "sequential", "vertical"] as const;

/** A course of a root, chapters, sequentials and problems, with the given (distinct) block keys. */
function structureOf(courseKey: string, keys: readonly string[]): CourseStructure {
  const records: BlockRecord[] = [];
  const add = (key: string, type: string, parentKey: string | null, position: number): void => {
    records.push({ key, type, parentKey, position, mode: blockMode(type), visibleToStaffOnly: false });
  };
  const [rootKey, ...rest] = keys;
  add(rootKey!, "course", null, 0);
  let chapter = rootKey!;
  let sequential = rootKey!;
  rest.forEach((key, at) => {
    const type = at % 3 === 0 ? "chapter" : at % 3 === 1 ? "sequential" : "problem";
    add(key, type, type === "chapter" ? rootKey! : type === "sequential" ? chapter : sequential, at);
    if (type === "chapter") chapter = key;
    if (type === "sequential") sequential = key;
  });
  const tree = buildCourseTree(records);
  return {
    course: { key: courseKey, mobileAvailable: false, structureVersion: 1, structureHash: "h" },
    key: parseCourseKey("course-v1:TesseraX+JSON+2026")!,
    tree,
    noProgress: tree ? aggregateTree(tree, new Map()) : new Map(),
  };
}

/** The item as an object, in the order the writer promises. */
function expectedItem(
  structure: CourseStructure,
  root: TreeNode | null,
  types: readonly string[],
  progress: ReadonlyMap<string, Progress>,
  extras: { username?: string; mean?: number },
): unknown {
  const of = (node: TreeNode) => completionDictionary(progress.get(node.key) ?? structure.noProgress.get(node.key)!);
  const item: Record<string, unknown> = {
    course_key: structure.course.key,
    completion: root ? of(root) : UNKNOWN_STRUCTURE_COMPLETION,
  };
  if (extras.username !== undefined) item.username = extras.username;
  if (extras.mean !== undefined) item.mean = extras.mean;
  const below = root ? (structure.tree?.outline ?? []).filter((node) => isWithin(node, root)) : [];
  for (const type of types) {
    item[type] = below
      .filter((node) => node.type === type)
      .map((node) => ({ course_key: structure.course.key, block_key: node.key, usage_key: node.key, completion: of(node) }));
  }
  return item;
}

function isWithin(node: TreeNode, root: TreeNode): boolean {
  for (let current: TreeNode | null = node; current; current = current.parent) if (current === root) return true;
  return false;
}

describe("itemJson", () => {
  it("writes what JSON.stringify writes for the same item, whatever the keys, usernames and figures", () => {
    fc.assert(
      fc.property(
        text,
        fc.uniqueArray(text, { minLength: 1, maxLength: 12 }),
        fc.subarray([...TYPES]),
        fc.option(text, { nil: undefined }),
        fc.option(figure, { nil: undefined }),
        fc.array(fc.tuple(fc.nat(), figure, figure), { maxLength: 12 }),
        fc.nat(),
        (courseKey, keys, types, username, mean, figures, rootAt) => {
          const structure = structureOf(courseKey, keys);
          const outline = structure.tree!.outline;
          const progress = new Map<string, Progress>(figures.map(([at, earned, possible]) => [outline[at % outline.length]!.key, { earned, possible }]));
          const root = rootAt % 2 === 0 ? null : outline[rootAt % outline.length]!;
          const extras = { ...(username === undefined ? {} : { username }), ...(mean === undefined ? {} : { mean }) };
          const written = jsonBytes(itemJson(structure, itemShape(structure, types, root), progress, extras)).toString("utf8");
          expect(written).toBe(JSON.stringify(expectedItem(structure, root ?? structure.tree!.root, types, progress, extras)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("writes an item of a course whose structure is unknown as JSON.stringify does", () => {
    fc.assert(
      fc.property(text, text, fc.subarray([...TYPES]), (courseKey, username, types) => {
        const structure: CourseStructure = {
          course: { key: courseKey, mobileAvailable: false, structureVersion: 0, structureHash: null },
          key: parseCourseKey("course-v1:TesseraX+JSON+2026")!,
          tree: null,
          noProgress: new Map(),
        };
        const written = jsonBytes(itemJson(structure, itemShape(structure, types, null), undefined, { username })).toString("utf8");
        expect(written).toBe(JSON.stringify(expectedItem(structure, null, types, new Map(), { username })));
      }),
    );
  });
});

describe("pageEnvelopeJson", () => {
  it("writes what JSON.stringify writes for the page envelope, whatever the request URL and results", () => {
    fc.assert(
      fc.property(
        text,
        fc.array(text, { maxLength: 5 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.nat(),
        (query, results, count, pageSize, pageAt) => {
          const request = { page: 1 + (pageAt % Math.max(1, Math.ceil(count / pageSize))), pageSize };
          const window = pageWindow(request, count)!;
          const url = `http://127.0.0.1:3001/api/completion/v1/course/?username=${query}&page=${request.page}`;
          const body = pageEnvelopeJson(
            window,
            url,
            results.map((result) => {
              const bytes = Buffer.from(JSON.stringify(result));
              return { byteLength: bytes.length, writeTo: (target: Buffer, at: number) => at + bytes.copy(target, at) };
            }),
          ).toString("utf8");
          expect(body).toBe(JSON.stringify(pageEnvelope(window, url, results)));
        },
      ),
    );
  });
});
