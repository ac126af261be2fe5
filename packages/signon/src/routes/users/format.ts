export { formatTime } from "../../time-format.js";

/** Readable names of the roles. */
export const roleLabels: Record<string, string> = {
  superadmin: "Superadmin",
  admin: "Admin",
  organisation_admin: "Organisation admin",
  normal: "Normal user",
};
