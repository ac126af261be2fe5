import type { SignonContext } from "../context.js";
import { listActiveAdministrators, type AdministratorGroup } from "../repositories/account-administrators.js";
import { listOrganisationAncestorIds } from "../repositories/organisations.js";
import type { User } from "../repositories/users.js";

/** The people named in a mail as those to ask: this many at most. */
const namedAtMost = 5;

/** The administrators a person can ask, and the support contact configured. */
export interface WhomToAsk {
  scope: "organisation" | "signon";
  people: { name: string; email: string }[];
  supportContact: string | null;
}

/**
 * Whom a person who cannot help themselves (suspended, or invited too long
 * ago) should ask: the administrators who may manage them, as
 * `web/policy.ts` decides it (lift a suspension, send a new invitation), who
 * can act now. Their organisation's administrators (its organisation admins,
 * and the super organisation admins of it or of an organisation above it)
 * when it has any; otherwise Sign-on's administrators (only superadmins for
 * a superadmin). Plus the support contact configured, if any.
 */
export async function whomToAsk(
  ctx: SignonContext,
  person: Pick<User, "uid" | "role" | "organisationId">,
): Promise<WhomToAsk> {
  const { supportContact } = ctx.config;
  if (person.organisationId !== null && ["super_organisation_admin", "organisation_admin", "normal"].includes(person.role)) {
    const chain = await listOrganisationAncestorIds(ctx.db, person.organisationId);
    const groups: AdministratorGroup[] = [{ role: "super_organisation_admin", organisationIds: chain }];
    if (person.role !== "super_organisation_admin") groups.push({ role: "organisation_admin", organisationIds: [person.organisationId] });
    const people = await listActiveAdministrators(ctx.db, groups, person.uid, namedAtMost);
    if (people.length > 0) return { scope: "organisation", people, supportContact };
  }
  const roles = person.role === "superadmin" ? ["superadmin"] : ["admin", "superadmin"];
  const people = await listActiveAdministrators(ctx.db, roles.map((role) => ({ role })), person.uid, namedAtMost);
  return { scope: "signon", people, supportContact };
}

/** The lines of a mail that say whom to ask to do `what` ("lift the suspension"). */
export function whomToAskLines(helpers: WhomToAsk, what: string): string[] {
  const lines =
    helpers.people.length === 0
      ? [`Ask an administrator of Tessera Sign-on to ${what}.`]
      : [
          `Ask ${helpers.scope === "organisation" ? "one of your organisation's administrators" : "one of the administrators of Tessera Sign-on"} to ${what}:`,
          "",
          ...helpers.people.map((person) => `  ${person.name} <${person.email}>`),
        ];
  if (helpers.supportContact !== null) lines.push("", `You can also contact: ${helpers.supportContact}`);
  return lines;
}
