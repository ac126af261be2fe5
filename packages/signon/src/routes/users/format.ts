export { formatTime } from "../../time-format.js";

/** Readable names of the roles. */
export const roleLabels: Record<string, string> = {
  superadmin: "Superadmin",
  admin: "Admin",
  super_organisation_admin: "Super organisation admin",
  organisation_admin: "Organisation admin",
  normal: "Normal user",
};
