/**
 * The one way Sign-on writes a time for people, on pages and in mails: to the
 * minute, in UTC, as `2026-11-21 09:05 UTC`. Machine-readable values (the
 * `datetime` attribute, JSON, CSV) stay ISO 8601.
 */
export function formatTime(time: Date): string;
export function formatTime(time: Date | null): string | null;
export function formatTime(time: Date | null): string | null {
  if (time === null) return null;
  return `${time.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
