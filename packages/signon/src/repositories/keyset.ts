import { asc, desc, sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";

/**
 * Keyset paging: a page after (or before) the key of a row, never an OFFSET,
 * so a deep page costs what the first one does. A key travels in a link as
 * `<base64url of the text part>.<uid>`.
 */

/** How a page is asked for: the first, the one after or before a row's key, or the last. */
export type PagePosition = { kind: "first" } | { kind: "last" } | { kind: "after" | "before"; key: RowKey };

/** The key of a row in a list ordered by a text then a uid (the uid breaks ties). */
export interface RowKey {
  text: string;
  uid: string;
}

/** The form of an encoded key in a query string (at most about 1,200 characters of text). */
export const rowKeyPattern = "^[A-Za-z0-9_-]{0,1400}\\.[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

export function encodeRowKey(key: RowKey): string {
  return `${Buffer.from(key.text, "utf8").toString("base64url")}.${key.uid}`;
}

/** The key of an encoded one, or `null` when it is not one (not the pattern, or text that is not UTF-8). */
export function decodeRowKey(encoded: string): RowKey | null {
  if (!new RegExp(rowKeyPattern).test(encoded)) return null;
  const [text, uid] = encoded.split(".") as [string, string];
  const bytes = Buffer.from(text, "base64url");
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (Buffer.from(decoded, "utf8").toString("base64url") !== text || decoded.includes("\u0000")) return null;
  return { text: decoded, uid: uid.toLowerCase() };
}

/** A page of rows and the keys its links carry. */
export interface KeysetPage<Row> {
  rows: Row[];
  /** The key of the first row, when a page comes before this one. */
  previous: RowKey | null;
  /** The key of the last row, when a page follows this one. */
  next: RowKey | null;
}

/**
 * Makes a page out of at most `size + 1` rows read in the direction the
 * position asks (`after` and `first`: forwards; `before` and `last`: backwards,
 * so reversed here), the extra row telling whether there is more that way.
 */
export function keysetPage<Row>(position: PagePosition, read: Row[], size: number, keyOf: (row: Row) => RowKey): KeysetPage<Row> {
  const more = read.length > size;
  const taken = read.slice(0, size);
  const forwards = position.kind === "first" || position.kind === "after";
  const rows = forwards ? taken : taken.reverse();
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (first === undefined || last === undefined) return { rows, previous: null, next: null };
  return {
    rows,
    previous: (forwards ? position.kind === "after" : more) ? keyOf(first) : null,
    next: (forwards ? more : position.kind === "before") ? keyOf(last) : null,
  };
}

/**
 * The condition and order of a page read at `position` in a list ordered by
 * `text` then `uid` (for an index on those two): after or before the key,
 * forwards for the first page and after a key, backwards for the last and
 * before a key.
 */
export function keysetClauses(position: PagePosition, text: SQL, uid: AnyPgColumn): { where: SQL | undefined; orderBy: SQL[] } {
  const forwards = position.kind === "first" || position.kind === "after";
  const orderBy = forwards ? [asc(text), asc(uid)] : [desc(text), desc(uid)];
  switch (position.kind) {
    case "first":
    case "last":
      return { where: undefined, orderBy };
    case "after":
      return { where: sql`(${text}, ${uid}) > (${position.key.text}, ${position.key.uid}::uuid)`, orderBy };
    case "before":
      return { where: sql`(${text}, ${uid}) < (${position.key.text}, ${position.key.uid}::uuid)`, orderBy };
  }
}

/**
 * Reads the page at `position` (`read` gets a position and a row count, and
 * returns rows in the order `keysetClauses` gives); a page before the first
 * full one becomes the first page.
 */
export async function readKeysetPage<Row>(
  position: PagePosition,
  size: number,
  read: (position: PagePosition, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => RowKey,
): Promise<KeysetPage<Row>> {
  const page = keysetPage(position, await read(position, size + 1), size, keyOf);
  if (position.kind === "before" && page.previous === null) return keysetPage({ kind: "first" }, await read({ kind: "first" }, size + 1), size, keyOf);
  return page;
}
