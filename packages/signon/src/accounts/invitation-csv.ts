import { CsvError, parse } from "csv-parse/sync";
import { AccountError } from "./manage-users.js";

/** Largest batch file accepted, in bytes. */
export const batchFileMaxBytes = 256 * 1024;
/** Most rows of a batch file (besides its header). */
export const batchFileMaxRows = 1000;
/** Longest line of a batch file, in characters. */
const maxRecordCharacters = 2000;

/** A batch file refused as a whole, with the message for the form and the HTTP status (400, or 413 when it is too large). */
export class BatchFileError extends AccountError {
  constructor(
    message: string,
    readonly status: 400 | 413 = 400,
  ) {
    super(message);
  }
}

/** One row of a batch file as written: its line, name, e-mail address, organisation (slug or name) and, when it cannot be used, why. */
export interface BatchFileRow {
  line: number;
  name: string;
  email: string;
  organisation: string | null;
  /** Set when the row is refused before it is tried (wrong columns, an address already on an earlier line). */
  problem?: string;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a batch invitation file: UTF-8 CSV (a byte-order mark is allowed),
 * one person per line as `Name,Email[,Organisation]`, the header line
 * `Name,Email[,Organisation]` optional, empty lines skipped. A file that is
 * too large, not UTF-8, holds NUL bytes, is not valid CSV (an unclosed quote,
 * a line over 2,000 characters) or has no rows or too many is refused as a
 * whole with `BatchFileError`; a row with the wrong number of columns, or
 * whose address appears on an earlier line, is kept with its `problem`.
 */
export function readBatchFile(bytes: Uint8Array): BatchFileRow[] {
  if (bytes.byteLength > batchFileMaxBytes) {
    throw new BatchFileError(`The file is larger than ${batchFileMaxBytes / 1024} KiB; split it into smaller files`, 413);
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new BatchFileError("The file is not UTF-8 text: save it as “CSV UTF-8” and upload it again");
  }
  if (text.includes("\u0000")) throw new BatchFileError("The file contains NUL bytes: it looks like a spreadsheet or another binary file, not CSV text");
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { bom: true, info: true, relax_column_count: true, skip_empty_lines: true, trim: true, max_record_size: maxRecordCharacters }) as unknown as typeof records;
  } catch (error) {
    if (error instanceof CsvError) throw new BatchFileError(`The file is not valid CSV: ${csvProblem(error)}`);
    throw error;
  }
  const first = records[0]?.record.map((cell) => cell.toLowerCase());
  if (first && first[0] === "name" && ["email", "e-mail", "email address", "e-mail address"].includes(first[1] ?? "")) records = records.slice(1);
  records = records.filter(({ record }) => record.some((cell) => cell !== ""));
  if (records.length === 0) throw new BatchFileError("The file has no rows: write one person per line as Name,Email or Name,Email,Organisation");
  if (records.length > batchFileMaxRows) {
    throw new BatchFileError(`The file has ${records.length} rows; at most ${batchFileMaxRows} can be invited at once, so split it`, 413);
  }
  const seen = new Map<string, number>();
  return records.map(({ record, info }) => {
    const line = info.lines;
    const [name = "", email = "", organisation = ""] = record;
    const row: BatchFileRow = { line, name, email, organisation: organisation === "" ? null : organisation };
    if (record.length < 2 || record.length > 3) {
      row.problem = `Expected Name,Email or Name,Email,Organisation; this line has ${record.length} column${record.length === 1 ? "" : "s"}`;
      return row;
    }
    const key = email.toLowerCase();
    const earlier = seen.get(key);
    if (earlier !== undefined) row.problem = `The same e-mail address is on line ${earlier}`;
    else if (key !== "") seen.set(key, line);
    return row;
  });
}

function csvProblem(error: CsvError): string {
  const line = (error as CsvError & { lines?: number }).lines;
  const where = typeof line === "number" ? ` (line ${line})` : "";
  switch (error.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return `a quoted field is never closed${where}`;
    case "CSV_INVALID_CLOSING_QUOTE":
    case "CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE":
      return `a quote is followed by other characters${where}; double quotes inside a quoted field are written ""`;
    case "CSV_MAX_RECORD_SIZE":
      return `a line is longer than ${maxRecordCharacters} characters${where}`;
    default:
      return `${error.message.split(":")[0] ?? "malformed"}${where}`;
  }
}
