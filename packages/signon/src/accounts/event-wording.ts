import type { AuditAction } from "../audit.js";
import { toldToSignOut } from "../pushes/fan-out-words.js";
import type { UserEventRow } from "../repositories/user-events.js";

/** Each audit action in plain words. */
const actionWords: Record<AuditAction, string> = {
  sign_in: "Signed in",
  sign_in_failed: "Sign-in failed",
  sign_in_refused: "Sign-in refused",
  account_locked: "Account locked after too many failed sign-ins",
  account_unlocked: "Account unlocked",
  sign_out: "Signed out",
  signing_keys_rotated: "OpenID Connect signing keys rotated",
  oidc_logout: "Signed out from an application (OpenID Connect logout)",
  // A sign-in counts once the application exchanges the code, as the pushes count it (fan-out-words.ts).
  authorization_code_issued: "Sign-in code issued for an application",
  authorization_code_replayed: "A used sign-in code was presented again",
  tokens_issued: "Signed in to an application: it issued them a token",
  tokens_refreshed: "Access tokens refreshed",
  refresh_token_reused: "A used refresh token was presented again",
  token_revoked: "Token revoked",
  client_authentication_failed: "Application authentication failed",
  application_created: "Application created",
  organisation_created: "Organisation created",
  user_created: "Account created",
  api_user_created: "API user created",
  permissions_granted: "Permissions granted",
  permissions_revoked: "Permissions revoked",
  token_issued_by_operator: "Token issued by an operator",
  user_suspended: "Suspended",
  user_unsuspended: "Unsuspended",
  user_updated: "Details changed",
  email_change_requested: "E-mail address change requested",
  email_change_confirmed: "E-mail address changed",
  email_change_cancelled: "E-mail address change cancelled",
  user_invited: "Invited",
  invitation_accepted: "Invitation accepted",
  invitation_batch_started: "Batch invitation started",
  password_changed: "Password changed",
  password_reset_requested: "Password reset requested",
  password_reset: "Password reset",
  two_step_enabled: "2-step verification set up",
  two_step_reset: "2-step verification reset",
  two_step_failed: "Wrong 2-step verification code",
  two_step_verified: "2-step verification code accepted",
  passkey_registered: "Passkey added",
  passkey_removed: "Passkey removed",
  passkey_verified: "Passkey accepted",
  passkey_failed: "Passkey refused",
  two_step_required: "2-step verification required",
  two_step_requirement_removed: "2-step verification no longer required",
  two_step_exempted: "Exempted from 2-step verification",
  two_step_exemption_removed: "Exemption from 2-step verification removed",
  organisation_two_step_required: "2-step verification required for an organisation",
  organisation_two_step_requirement_removed: "2-step verification no longer required for an organisation",
  role_changed: "Role changed",
  application_updated: "Application changed",
  application_secret_rotated: "Application secret rotated",
  application_retired: "Application retired",
  application_unretired: "Application brought back from retirement",
  application_uris_rewritten: "Application URIs rewritten for another environment",
  credentials_exported: "Credentials exported to Kubernetes",
  organisation_updated: "Organisation changed",
  organisations_imported: "Organisations imported",
  imported_from_signon: "Imported from GOV.UK Signon",
  signon_event: "In GOV.UK Signon",
  organisation_register_fetched: "Organisations fetched from the register",
  application_access_given_up: "Gave up their access to an application",
  api_token_revoked: "API token revoked",
  api_token_renewed: "API token renewed automatically before it expired",
  renewed_token_acknowledged: "Renewed API token acknowledged",
  token_auto_renewal_changed: "Automatic token renewal changed",
  push_retried: "Push delivery retried",
  suspended_for_inactivity: "Suspended for inactivity",
  inactivity_reminder_sent: "Reminded by e-mail of the suspension for inactivity",
  unused_invitation_deleted: "Account deleted: the invitation was never used",
  sign_in_tokens_revoked: "Signed out of every application",
  client_authentication_flood: "Over 100 failed application authentications from many addresses in 10 minutes",
  identity_provider_connected: "Organisation connected to its identity provider",
  identity_provider_changed: "Organisation's identity provider changed",
  identity_provider_disconnected: "Organisation's identity provider disconnected",
  upstream_identity_linked: "Linked to the organisation's identity provider",
  upstream_sign_in_refused: "Sign-in through the organisation's identity provider refused",
  upstream_logout: "Signed out by the organisation's identity provider",
};

/** Why every sign-in of a person ended (`sign_in_tokens_revoked`). */
const causeWords: Record<string, string> = {
  password_changed: "a password change",
  password_reset: "a password reset",
  email_changed: "an e-mail address change",
  two_step_reset: "a 2-step verification reset",
};

const roleWords: Record<string, string> = { superadmin: "superadmin", admin: "admin", super_organisation_admin: "super organisation admin", organisation_admin: "organisation admin", normal: "normal user" };

/** What a reset request mailed in place of a reset link (see `password-reset.ts`). */
const resetMailWords: Record<string, string> = {
  suspended: " (the account is suspended: mailed whom to ask, without a link)",
  invitation: " (invitation not accepted yet: its link was mailed again)",
  invitation_expired: " (the invitation had expired: mailed whom to ask for a new one)",
};

function uncapitalised(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function stringList(value: unknown): string | null {
  return Array.isArray(value) && value.every((item) => typeof item === "string") ? value.join(", ") : null;
}

/**
 * An audit event in plain words, as seen from the page of `pageUserUid`:
 * what happened, to whom when it was someone else, and the details that
 * matter (permissions, reason, role, changed fields).
 */
export function describeEvent(event: UserEventRow, pageUserUid: string): string {
  let text = actionWords[event.action as AuditAction] ?? event.action.replace(/_/g, " ");
  if (event.subjectUid !== null && event.subjectUid !== pageUserUid) text += `: ${event.subjectName ?? "a deleted user"}`;
  const details = event.details;
  const permissions = stringList(details.permissions);
  if (permissions !== null) text += ` (${permissions})`;
  if (typeof details.from === "string" && typeof details.to === "string") text += ` from ${roleWords[details.from] ?? details.from} to ${roleWords[details.to] ?? details.to}`;
  const changed = stringList(details.changed);
  if (changed !== null) text += ` (${changed.replace("organisationId", "organisation")})`;
  if (typeof details.reason === "string") text += ` (reason: ${details.reason})`;
  // An event of GOV.UK Signon's log, imported: its own description (for one Sign-on does not record) and message.
  if (event.action === "signon_event" && typeof details.signon_event === "string") text += `: ${details.signon_event}`;
  if (typeof details.signon_message === "string" && details.signon_message !== "") text += ` (${details.signon_message})`;
  if (event.action === "inactivity_reminder_sent" && typeof details.days === "number") text += ` (${details.days} ${details.days === 1 ? "day" : "days"} before)`;
  if (event.action === "unused_invitation_deleted" && typeof details.email === "string") text += ` (${details.email})`;
  if (event.action === "user_unsuspended" && details.new_password_required === true) text += " (a new password is required; a reset link was mailed)";
  if (event.action.startsWith("passkey_") && typeof details.name === "string") text += ` (“${details.name}”)`;
  if (event.action === "two_step_reset" && typeof details.passkeys_removed === "number") text += ` (${details.passkeys_removed} ${details.passkeys_removed === 1 ? "passkey" : "passkeys"} removed)`;
  if (event.action === "two_step_exempted" && typeof details.until === "string") text += ` until ${details.until.slice(0, 10)}`;
  if (event.action.startsWith("organisation_two_step_") && typeof details.slug === "string") text += ` (${details.slug})`;
  if (typeof details.cause === "string" && typeof details.tokens === "number") {
    text += ` after ${causeWords[details.cause] ?? details.cause.replace(/_/g, " ")}: ${details.tokens} ${details.tokens === 1 ? "token" : "tokens"} revoked`;
  }
  // A suspension or the end of every sign-in: the applications told, as the event recorded them (none before it did).
  const told = details.told;
  if (Array.isArray(told) && told.every((item) => typeof item === "string") && (details.fan_out === "token" || details.fan_out === "token-or-permission")) {
    text += `; ${uncapitalised(toldToSignOut(details.fan_out, told, "then"))}`;
  }
  if (event.action === "account_locked" && typeof details.failures === "number") text += ` (${details.failures} failed sign-ins${lockSources(details.sources)})`;
  if (event.action === "password_reset_requested" && typeof details.mail === "string") text += resetMailWords[details.mail] ?? "";
  if (details.through === "unlock_link") text += " (through the link mailed with the lock)";
  if (details.through === "link") text += " (confirmed through the link mailed to the new address)";
  if (details.through === "out_of_band") text += " (confirmed out of band, without a link)";
  if (details.through === "case_only") text += " (the same address in other case)";
  if (event.action === "application_uris_rewritten" && typeof details.from_host === "string" && typeof details.to_host === "string") {
    const count = Array.isArray(details.changes) ? details.changes.length : 0;
    text += ` from ${details.from_host} to ${details.to_host} (${count} ${count === 1 ? "URI" : "URIs"})`;
  }
  if (event.action === "upstream_sign_in_refused" && typeof details.detail === "string") text += `: ${details.detail}`;
  if (event.action === "upstream_logout" && typeof details.sessions_ended === "number") text += ` (${details.sessions_ended} ${details.sessions_ended === 1 ? "session" : "sessions"} ended)`;
  if (event.action === "upstream_logout" && typeof details.refused === "string") text += `: refused, ${details.refused}`;
  if (event.action.startsWith("identity_provider_") && typeof details.issuer === "string") text += ` (${details.issuer})`;
  if (event.action === "credentials_exported" && typeof details.secret === "string") {
    text += ` as secret ${details.secret}${typeof details.namespace === "string" ? ` in namespace ${details.namespace}` : ""}`;
    text += details.kind === "client_secret" ? ", with a new client secret" : ", with a new API token";
    if (typeof details.destination === "string") text += ` (written to ${details.destination})`;
  }
  return text;
}

/** The causes of a lock as its audit event keeps them: each source address and how often it failed. */
function lockSources(value: unknown): string {
  if (!Array.isArray(value)) return "";
  const parts = value
    .filter((item): item is { address: string; kind: string; failures: number } => typeof item === "object" && item !== null && typeof (item as { address?: unknown }).address === "string")
    .map((item) => `${item.address}: ${item.failures} ${item.kind === "two_step_code" ? "wrong codes" : "wrong passwords"}`);
  return parts.length === 0 ? "" : `; ${parts.join(", ")}`;
}
