import { AccountError } from "./manage-users.js";

/**
 * One organisation as an import file describes it. A field that is
 * `undefined` was not given (the column or key is absent): an existing
 * organisation keeps its value. `parentSlug` `null`: no parent.
 */
export interface OrganisationImportRow {
  /** Where the row is in the file: the line of a CSV file (the header is line 1), the position (from 1) in a JSON list. */
  row: number;
  slug: string;
  name: string;
  parentSlug: string | null | undefined;
  closed: boolean | undefined;
  contentId: string | undefined;
}

/** A row of the file that could not be read as an organisation, with the reason. */
export interface UnreadableImportRow {
  row: number;
  slug: string | null;
  message: string;
}

/** The most rows one file may hold. */
export const maxImportRows = 10_000;
/** The largest file accepted, in bytes. */
export const maxImportBytes = 5 * 1024 * 1024;

const columns = ["slug", "name", "parent_slug", "closed", "content_id"] as const;

/**
 * Reads an organisation import file: CSV with a header line naming the
 * columns (`slug`, `name`, and optionally `parent_slug`, `closed`,
 * `content_id`), or JSON (a list of objects with those keys, or
 * `{"organisations": [...]}`). JSON is recognised by `format`, or by a
 * first character `[` or `{`. A file that cannot be read at all throws an
 * `AccountError` saying why; a row that cannot be read is returned with its
 * reason, the others still count.
 */
export function readOrganisationImportFile(
  text: string,
  format: "csv" | "json" | "auto" = "auto",
): { rows: OrganisationImportRow[]; unreadable: UnreadableImportRow[] } {
  if (Buffer.byteLength(text, "utf8") > maxImportBytes) throw new AccountError(`The file is larger than ${maxImportBytes / 1024 / 1024} MiB`);
  const body = text.replace(/^\uFEFF/, "");
  const json = format === "json" || (format === "auto" && /^\s*[[{]/.test(body));
  const records = json ? jsonRecords(body) : csvRecords(body);
  if (records.length > maxImportRows) throw new AccountError(`The file has more than ${maxImportRows} rows`);
  return readRecords(records);
}

function readRecords(records: readonly RawRecord[]): { rows: OrganisationImportRow[]; unreadable: UnreadableImportRow[] } {
  const rows: OrganisationImportRow[] = [];
  const unreadable: UnreadableImportRow[] = [];
  for (const record of records) {
    const read = readRecord(record);
    if ("message" in read) unreadable.push(read);
    else rows.push(read);
  }
  return { rows, unreadable };
}

/** One record before checking: the row number and the raw value of each given column, or why it has none. */
interface RawRecord {
  row: number;
  values: Partial<Record<(typeof columns)[number], unknown>>;
  problem?: string;
}

function jsonRecords(body: string): RawRecord[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new AccountError("The file is not valid JSON");
  }
  const list: unknown = Array.isArray(parsed) ? parsed : isObject(parsed) && Array.isArray(parsed.organisations) ? parsed.organisations : null;
  if (!Array.isArray(list)) throw new AccountError('A JSON file holds a list of organisations, or an object {"organisations": [...]}');
  if (list.length > maxImportRows) throw new AccountError(`The file has more than ${maxImportRows} rows`);
  return listRecords(list);
}

/**
 * Reads organisations already parsed from JSON: a list of objects with the
 * keys of a JSON import file, as {@link readOrganisationImportFile} reads
 * one. Rows are numbered from 1 in list order. For sources of another shape
 * (the organisation register) that convert their entries to this one.
 */
export function readOrganisationImportList(list: readonly unknown[]): { rows: OrganisationImportRow[]; unreadable: UnreadableImportRow[] } {
  if (list.length > maxImportRows) throw new AccountError(`There are more than ${maxImportRows} organisations`);
  return readRecords(listRecords(list));
}

function listRecords(list: readonly unknown[]): RawRecord[] {
  return list.map((item: unknown, index: number): RawRecord => {
    if (!isObject(item)) return { row: index + 1, values: {}, problem: "Each item is an object with slug and name" };
    const values: RawRecord["values"] = {};
    for (const column of columns) if (column in item) values[column] = item[column];
    return { row: index + 1, values };
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function csvRecords(body: string): RawRecord[] {
  const lines = parseCsv(body);
  const header = lines.shift();
  if (!header || header.fields.every((field) => field.trim() === "")) throw new AccountError("The CSV file is empty: its first line names the columns (slug,name,parent_slug,closed)");
  const names = header.fields.map((field) => field.trim().toLowerCase());
  const unknown = names.filter((name) => !(columns as readonly string[]).includes(name));
  if (unknown.length > 0) throw new AccountError(`Unknown column ${unknown.map((name) => JSON.stringify(name.slice(0, 40))).join(", ")}: the columns are ${columns.join(", ")}`);
  if (new Set(names).size !== names.length) throw new AccountError("A column is named twice in the header line");
  if (!names.includes("slug") || !names.includes("name")) throw new AccountError("The header line must name the columns slug and name");
  return lines
    .filter((line) => !(line.fields.length === 1 && line.fields[0] === ""))
    .map((line): RawRecord => {
      if (line.fields.length !== names.length) return { row: line.line, values: {}, problem: `${line.fields.length} fields where the header has ${names.length}` };
      const values: RawRecord["values"] = {};
      names.forEach((name, index) => (values[name as (typeof columns)[number]] = line.fields[index]));
      return { row: line.line, values };
    });
}

/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF or LF, a field
 * in double quotes may hold commas, line breaks and doubled quotes. Returns
 * each record with the line it starts on; an unterminated quote throws.
 */
export function parseCsv(body: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = "";
  let line = 1;
  let recordLine = 1;
  let index = 0;
  let quoted = false;
  while (index < body.length) {
    const char = body[index] as string;
    if (quoted) {
      if (char === '"') {
        if (body[index + 1] === '"') {
          field += '"';
          index += 2;
          continue;
        }
        quoted = false;
      } else {
        if (char === "\n") line += 1;
        field += char;
      }
      index += 1;
      continue;
    }
    if (char === '"' && field === "") quoted = true;
    else if (char === ",") {
      fields.push(field);
      field = "";
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && body[index + 1] === "\n") index += 1;
      fields.push(field);
      records.push({ line: recordLine, fields });
      fields = [];
      field = "";
      line += 1;
      recordLine = line;
    } else field += char;
    index += 1;
  }
  if (quoted) throw new AccountError(`Line ${recordLine}: a quoted field is not closed`);
  if (field !== "" || fields.length > 0) {
    fields.push(field);
    records.push({ line: recordLine, fields });
  }
  return records;
}

const slugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function readRecord(record: RawRecord): OrganisationImportRow | UnreadableImportRow {
  const { row, values } = record;
  const rawSlug = typeof values.slug === "string" ? values.slug.trim() : null;
  const fail = (message: string): UnreadableImportRow => ({ row, slug: rawSlug !== null && rawSlug.length <= 100 ? rawSlug : null, message });
  if (record.problem !== undefined) return fail(record.problem);
  if (rawSlug === null || rawSlug === "" || rawSlug.length > 100 || !slugPattern.test(rawSlug)) {
    return fail("A slug is up to 100 lower-case letters and digits separated by single hyphens");
  }
  const name = typeof values.name === "string" ? values.name.trim() : "";
  if (name === "" || name.length > 200 || hasControlCharacter(name)) return fail("A name has 1 to 200 characters, without control characters");
  let parentSlug: string | null | undefined;
  if (values.parent_slug === undefined) parentSlug = undefined;
  else if (values.parent_slug === null || (typeof values.parent_slug === "string" && values.parent_slug.trim() === "")) parentSlug = null;
  else if (typeof values.parent_slug === "string" && slugPattern.test(values.parent_slug.trim()) && values.parent_slug.trim().length <= 100) parentSlug = values.parent_slug.trim();
  else return fail("parent_slug is the slug of another organisation, or empty for none");
  if (parentSlug === rawSlug) return fail("An organisation cannot be its own parent");
  const closed = readClosed(values.closed);
  if (closed === "invalid") return fail("closed is true or false (or yes, no, 1, 0, or empty for open)");
  let contentId: string | undefined;
  if (values.content_id === undefined || values.content_id === null || (typeof values.content_id === "string" && values.content_id.trim() === "")) contentId = undefined;
  else if (typeof values.content_id === "string" && uuidPattern.test(values.content_id.trim())) contentId = values.content_id.trim().toLowerCase();
  else return fail("content_id is a UUID, or empty");
  return { row, slug: rawSlug, name, parentSlug, closed, contentId };
}

function readClosed(value: unknown): boolean | undefined | "invalid" {
  if (value === undefined) return undefined;
  if (value === null || typeof value === "boolean") return value === true;
  if (typeof value !== "string") return "invalid";
  const word = value.trim().toLowerCase();
  if (["", "false", "no", "0"].includes(word)) return false;
  if (["true", "yes", "1"].includes(word)) return true;
  return "invalid";
}

function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
