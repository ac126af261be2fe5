import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { isContainerType } from "../domain/block-modes.js";
import { MAX_TREE_DEPTH } from "../domain/course-tree.js";
import { formatCourseKey, isValidBlockPart, parseCourseKey } from "../domain/keys.js";
import { isStorableInstant } from "../domain/timestamps.js";
import type { BulkBlock } from "./bulk-format.js";

/** Why an OLX directory could not be imported; the message names the file. */
export class OlxError extends Error {
  override readonly name = "OlxError";
}

/** A course read from an OLX export: its key and its block tree. */
export interface OlxCourse {
  readonly courseKey: string;
  readonly structure: BulkBlock;
}

/** An element as fast-xml-parser returns it with `preserveOrder`. */
type OrderedNode = Record<string, unknown> & { ":@"?: Record<string, string> };

/** Course children that are course settings, not blocks. */
const COURSE_SETTING_TAGS: ReadonlySet<string> = new Set(["wiki", "textbook"]);

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  // Room for the deepest course tree accepted and the markup of leaf content inside it.
  maxNestedTags: MAX_TREE_DEPTH + 100,
});

function tagOf(node: OrderedNode): string | null {
  for (const key of Object.keys(node)) if (key !== ":@" && key !== "#text" && !key.startsWith("?")) return key;
  return null;
}

function childrenOf(node: OrderedNode, tag: string): OrderedNode[] {
  const children = node[tag];
  return Array.isArray(children) ? (children as OrderedNode[]) : [];
}

function elementChildren(node: OrderedNode, tag: string): OrderedNode[] {
  return childrenOf(node, tag).filter((child) => tagOf(child) !== null);
}

async function readRootElement(path: string): Promise<{ tag: string; node: OrderedNode }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new OlxError(`Cannot read ${path}.`);
  }
  let parsed: OrderedNode[];
  try {
    parsed = parser.parse(text) as OrderedNode[];
  } catch (error) {
    throw new OlxError(`${path} is not well-formed XML: ${(error as Error).message}`);
  }
  for (const node of parsed) {
    const tag = tagOf(node);
    if (tag !== null) return { tag, node };
  }
  throw new OlxError(`${path} has no root element.`);
}

/**
 * A pointer tag refers to a block defined in `{type}/{url_name}.xml`: it has a
 * `url_name` and no other attribute and no content (the course pointer in
 * course.xml may also carry `org` and `course`).
 */
function isPointer(node: OrderedNode, tag: string): boolean {
  const attributes = Object.keys(node[":@"] ?? {});
  const allowed = tag === "course" ? new Set(["url_name", "org", "course"]) : new Set(["url_name"]);
  return attributes.includes("url_name") && attributes.every((name) => allowed.has(name)) && childrenOf(node, tag).length === 0;
}

/**
 * Reads an Open edX OLX export directory: `course.xml` points at
 * `course/{run}.xml`, whose chapters, sequentials, verticals and leaf blocks are
 * either defined inline in their parent's file or referenced by `url_name`
 * from a file in the folder of their type (`chapter/{url_name}.xml`, ...).
 * Leaf blocks' own content (problem XML, HTML) is not read past their root tag.
 * The course key is `course-v1:{org}+{course}+{run}` unless one is given.
 * @see https://edx.readthedocs.io/projects/edx-open-learning-xml/en/latest/
 */
export async function readOlxCourse(directory: string, courseKeyOverride?: string): Promise<OlxCourse> {
  const { tag, node } = await readRootElement(join(directory, "course.xml"));
  if (tag !== "course") throw new OlxError(`course.xml: the root element must be <course>, not <${tag}>.`);
  const attributes = node[":@"] ?? {};
  const run = attributes["url_name"];
  if (!run) throw new OlxError("course.xml: <course> has no url_name.");

  let courseKey: string;
  if (courseKeyOverride !== undefined) {
    const parsed = parseCourseKey(courseKeyOverride);
    if (!parsed) throw new OlxError(`Invalid course key: ${courseKeyOverride}`);
    courseKey = formatCourseKey(parsed);
  } else {
    const candidate = `course-v1:${attributes["org"] ?? ""}+${attributes["course"] ?? ""}+${run}`;
    const parsed = parseCourseKey(candidate);
    if (!parsed) throw new OlxError(`course.xml: org, course and url_name do not make a valid course key (${candidate}).`);
    courseKey = formatCourseKey(parsed);
  }

  const seen = new Set<string>();
  const structure = await readBlock(directory, "course", node, "course.xml", seen, { counter: 0 }, 1);
  return { courseKey, structure };
}

async function readBlock(
  directory: string,
  tag: string,
  node: OrderedNode,
  file: string,
  seen: Set<string>,
  anonymous: { counter: number },
  depth: number,
): Promise<BulkBlock> {
  if (depth > MAX_TREE_DEPTH) throw new OlxError(`${file}: <${tag}> lies more than ${MAX_TREE_DEPTH} levels deep in the course.`);
  const attributes = node[":@"] ?? {};
  let urlName = attributes["url_name"];
  let definition = node;
  let definitionFile = file;
  if (isPointer(node, tag)) {
    definitionFile = join(tag, `${urlName}.xml`);
    const loaded = await readRootElement(join(directory, definitionFile));
    if (loaded.tag !== tag) throw new OlxError(`${definitionFile}: expected <${tag}>, found <${loaded.tag}>.`);
    definition = loaded.node;
  }
  if (urlName === undefined) {
    anonymous.counter += 1;
    urlName = `${tag}_${anonymous.counter}`;
  }
  if (!isValidBlockPart("type", tag)) throw new OlxError(`${file}: <${tag}> is not a valid block type.`);
  if (!isValidBlockPart("id", urlName)) throw new OlxError(`${file}: url_name "${urlName}" is not a valid block id.`);
  const identity = `${tag}/${urlName}`;
  if (seen.has(identity)) throw new OlxError(`${definitionFile}: block ${identity} appears twice in the course.`);
  seen.add(identity);

  const definitionAttributes = { ...(definition[":@"] ?? {}), ...attributes };
  const block: BulkBlock = { type: tag, id: tag === "course" ? "course" : urlName };
  const displayName = definitionAttributes["display_name"];
  if (displayName !== undefined) block.display_name = displayName;
  const start = definitionAttributes["start"];
  if (start !== undefined) block.start = normaliseStart(start, definitionFile);
  if (definitionAttributes["visible_to_staff_only"]?.toLowerCase() === "true") block.visible_to_staff_only = true;

  if (isContainerType(tag)) {
    const children: BulkBlock[] = [];
    for (const child of elementChildren(definition, tag)) {
      const childTag = tagOf(child)!;
      if (tag === "course" && COURSE_SETTING_TAGS.has(childTag)) continue;
      children.push(await readBlock(directory, childTag, child, definitionFile, seen, anonymous, depth + 1));
    }
    block.children = children;
  }
  return block;
}

/** OLX writes start dates as quoted ISO strings; stored as ISO 8601 with a zone, within the years 0001–9999. */
function normaliseStart(text: string, file: string): string {
  const unquoted = text.replace(/^"|"$/g, "");
  const date = new Date(Date.parse(unquoted));
  if (Number.isNaN(date.getTime())) throw new OlxError(`${file}: start date "${text}" is not a date.`);
  if (!isStorableInstant(date)) throw new OlxError(`${file}: start date "${text}" lies outside the years 0001 to 9999 (UTC).`);
  return date.toISOString();
}
