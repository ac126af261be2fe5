import type { FastifyReply, FastifyRequest } from "fastify";
import { pendingEmailChange } from "../../accounts/email-change.js";
import type { FieldErrors } from "../../accounts/password-policy.js";
import { findOrganisationSummary, listPermissionsOfUser } from "../../repositories/account-overview.js";
import { eventsOfUser } from "../../accounts/user-events.js";
import type { UserEventRow } from "../../repositories/user-events.js";
import type { User } from "../../repositories/users.js";
import { renderPage } from "../../web/page.js";
import { formatTime, roleLabels } from "../users/format.js";
import { describeActivity } from "./activity-words.js";

/** How many of the person's latest events the account page lists. */
export const recentActivityCount = 20;

/** The values and messages of a refused form of the account page. */
export interface AccountForms {
  details?: { values: { name: string }; errors: FieldErrors };
  email?: { values: { email: string }; errors: FieldErrors };
}

/**
 * Renders `GET /account`: the person's details (with the forms to change
 * the name and to ask for a new e-mail address, and any pending address
 * change), their applications and permissions, and their recent activity
 * in plain words. `forms` refills a refused form with its messages.
 */
export async function renderAccountPage(
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  forms: AccountForms = {},
  status = 200,
): Promise<FastifyReply> {
  const db = request.server.signon.db;
  const organisation = user.organisationId === null ? null : await findOrganisationSummary(db, user.organisationId);
  const applications: { id: string; name: string; retired: boolean; permissions: string[] }[] = [];
  // API-only applications are not for people: what is held there is not shown.
  for (const row of (await listPermissionsOfUser(db, user.uid)).filter((one) => !one.apiOnly)) {
    const last = applications.at(-1);
    if (last && last.id === row.applicationId) last.permissions.push(row.permission);
    else applications.push({ id: row.applicationId, name: row.applicationName, retired: row.retired, permissions: [row.permission] });
  }
  const pending = await pendingEmailChange(request.server.signon, user.uid);
  const recent = await eventsOfUser(request.server.signon, user.uid, null, recentActivityCount);
  const activity = activityRows(recent.events, user.uid);
  return renderPage(
    request,
    reply,
    "account/show.eta",
    {
      title: "Your account",
      account: {
        name: user.name,
        email: user.email,
        role: roleLabels[user.role] ?? user.role,
        organisation: organisation?.name ?? null,
        twoStepOn: user.otpEnabledAt !== null,
        passkeyCount: user.passkeyCount,
      },
      pendingEmail: pending ? { to: pending.newEmail, until: formatTime(pending.expiresAt), byAdministrator: pending.requestedByUid !== user.uid } : null,
      values: { name: forms.details?.values.name ?? user.name, email: forms.email?.values.email ?? "" },
      errors: { ...(forms.details?.errors ?? {}), ...(forms.email?.errors ?? {}) },
      applications,
      activity,
      olderActivityHref: recent.olderThan === null ? null : `/account/activity?before=${recent.olderThan}`,
    },
    status,
  );
}

/** Audit events as the person's own activity list shows them. */
export function activityRows(events: readonly UserEventRow[], userUid: string): { when: string; datetime: string; what: string; browser: string | null }[] {
  return events.map((event) => ({
    when: formatTime(event.occurredAt),
    datetime: event.occurredAt.toISOString(),
    what: describeActivity(event, userUid),
    browser: event.userAgent,
  }));
}
