/** A time as the users pages show it: `2026-11-21 09:05 UTC`, or `null` for none. */
export function formatTime(time: Date): string;
export function formatTime(time: Date | null): string | null;
export function formatTime(time: Date | null): string | null {
  if (time === null) return null;
  return `${time.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Readable names of the roles. */
export const roleLabels: Record<string, string> = {
  superadmin: "Superadmin",
  admin: "Admin",
  super_organisation_admin: "Super organisation admin",
  organisation_admin: "Organisation admin",
  normal: "Normal user",
};
