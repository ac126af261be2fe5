/**
 * Instants that the service accepts and stores (a completion's `modified`, a
 * block's `start`): RFC 3339 date-times whose instant, converted to UTC, lies
 * in the years 0001 to 9999. PostgreSQL's `timestamptz` has no year 0 and
 * JavaScript dates print years past 9999 in a form it does not read, so this
 * is the range both agree on.
 */

/** The earliest instant accepted. */
export const EARLIEST_INSTANT = new Date("0001-01-01T00:00:00.000Z");
/** The latest instant accepted. */
export const LATEST_INSTANT = new Date("9999-12-31T23:59:59.999Z");

/** RFC 3339 `date-time` (§5.6): a date, `T` (or a space), a time with optional fraction, and `Z` or an offset. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** Whether a date is a real instant within {@link EARLIEST_INSTANT} and {@link LATEST_INSTANT}. */
export function isStorableInstant(date: Date): boolean {
  const time = date.getTime();
  return !Number.isNaN(time) && time >= EARLIEST_INSTANT.getTime() && time <= LATEST_INSTANT.getTime();
}

/**
 * Parses an RFC 3339 date-time into its instant; null when the text is not
 * one (a day the month does not have, an hour past 23, an offset past 23:59)
 * or its instant lies outside the years 0001–9999 in UTC. A leap second
 * (`:60`) is read as the first second of the next minute, as PostgreSQL
 * does; fractions finer than a millisecond are cut.
 * @see https://www.rfc-editor.org/rfc/rfc3339#section-5.6
 */
export function parseTimestamp(text: string): Date | null {
  const match = DATE_TIME.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const millisecond = match[7] === undefined ? 0 : Number(match[7].slice(0, 3).padEnd(3, "0"));
  const offsetSign = match[8] === "-" ? -1 : 1;
  const offsetHours = match[9] === undefined ? 0 : Number(match[9]);
  const offsetMinutes = match[10] === undefined ? 0 : Number(match[10]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) return null;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offsetSign * (offsetHours * 60 + offsetMinutes), second, millisecond);
  return isStorableInstant(date) ? date : null;
}

/** Whether text is a date-time that {@link parseTimestamp} accepts: the `date-time` format of the service's schemas. */
export function isTimestamp(text: string): boolean {
  return parseTimestamp(text) !== null;
}
