import type { AuditAction } from "../audit.js";
import type { ImportedEvent } from "./apply.js";
import { uuidShape } from "./convert.js";
import type { SignonEvent } from "./signon-source.js";

/**
 * Signon's event log (`event_logs.event_id`, app/models/event_log.rb) in
 * Sign-on's words: each event Sign-on records too becomes that action; the
 * others are kept as `signon_event`, with Signon's id and description.
 */
export const signonEventDescriptions: Record<number, string> = {
  1: "Password verification failed too many times, account locked",
  2: "Account suspended",
  3: "Account unsuspended",
  4: "Account auto-suspended",
  5: "Manual account unlock",
  6: "Password expired",
  7: "Password reset request",
  8: "Password reset page loaded",
  9: "Password reset attempt failure",
  10: "Successful password change",
  11: "Successful login",
  12: "Unsuccessful login",
  13: "Unsuccessful login attempt to a suspended account, with the correct username and password",
  14: "Unsuccessful password change",
  15: "Email changed",
  16: "Email change initiated",
  17: "Email change confirmed",
  18: "2-step verification enabled",
  19: "2-step verification reset",
  20: "2-step verification setup failed",
  21: "2-step verification successful",
  22: "2-step verification failed",
  23: "2-step verification failed too many times, account locked",
  24: "2-step verification phone changed",
  25: "2-step verification phone change failed",
  26: "2-step prompt deferred",
  27: "Account created",
  28: "Access token re-generated",
  29: "Access token generated",
  30: "Access token revoked",
  31: "Password reset page loaded but the token has expired",
  32: "Password reset successfully",
  33: "Role changed",
  34: "Account updated",
  35: "Permissions added",
  36: "Permissions removed",
  37: "Account was invited",
  38: "Attempted login to nonexistent account",
  39: "Exempted from 2-step verification",
  40: "2-step verification exemption updated",
  41: "Exemption from 2-step verification removed",
  42: "2-step verification setup mandated at next login",
  43: "Access grants deleted",
  44: "Access tokens deleted",
  45: "Account deleted",
  46: "Organisation changed",
  47: "Successful user application authorization",
  48: "Access token automatically generated as existing token due to expire in two weeks",
};

const actions: Partial<Record<number, AuditAction>> = {
  1: "account_locked",
  2: "user_suspended",
  3: "user_unsuspended",
  4: "suspended_for_inactivity",
  5: "account_unlocked",
  7: "password_reset_requested",
  10: "password_changed",
  11: "sign_in",
  12: "sign_in_failed",
  13: "sign_in_refused",
  15: "user_updated",
  16: "email_change_requested",
  17: "email_change_confirmed",
  18: "two_step_enabled",
  19: "two_step_reset",
  21: "two_step_verified",
  22: "two_step_failed",
  23: "account_locked",
  27: "user_created",
  29: "token_issued_by_operator",
  30: "api_token_revoked",
  32: "password_reset",
  33: "role_changed",
  34: "user_updated",
  35: "permissions_granted",
  36: "permissions_revoked",
  37: "user_invited",
  39: "two_step_exempted",
  41: "two_step_exemption_removed",
  42: "two_step_required",
  // A sign-in to an application: what the usage pages count.
  47: "authorization_code_issued",
  48: "api_token_renewed",
};

/** The action an event of Signon becomes here. */
export function actionOfSignonEvent(eventId: number): AuditAction {
  return actions[eventId] ?? "signon_event";
}

/** Signon's `ip_address` (IPAddr#to_i in a DECIMAL(38)) as an address: IPv4 up to 2^32 - 1, IPv6 above. */
export function addressOfSignonIp(value: string | null): string | null {
  if (value === null || !/^\d{1,39}$/.test(value)) return null;
  const number = BigInt(value);
  if (number <= 0xffffffffn) return [24n, 16n, 8n, 0n].map((shift) => String((number >> shift) & 0xffn)).join(".");
  if (number >= 1n << 128n) return null;
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((number >> shift) & 0xffffn).toString(16));
  return groups.join(":");
}

/**
 * Signon's event as a row of the audit log: its initiator by uid (`uidOf`: Signon's user ids, those in UUID form),
 * its application by Sign-on's id, and Signon's description for an event Sign-on does not record. NUL, which
 * PostgreSQL's text cannot hold, is dropped from the message and the browser.
 */
export function auditEventOf(event: SignonEvent, uidOf: Map<number, string>, applicationIds: Map<string, string>): ImportedEvent {
  const action = actionOfSignonEvent(event.eventId);
  const subject = event.uid?.toLowerCase() ?? null;
  return {
    id: event.id,
    action,
    occurredAt: event.createdAt,
    actorUid: event.initiatorId === null ? null : (uidOf.get(event.initiatorId) ?? null),
    subjectUid: subject !== null && uuidShape.test(subject) ? subject : null,
    applicationId: event.applicationId === null ? null : (applicationIds.get(`application:${event.applicationId}`) ?? null),
    ip: addressOfSignonIp(event.ipAddress),
    userAgent: event.userAgent?.replaceAll("\u0000", "").slice(0, 512) ?? null,
    details: {
      signon_event_id: event.eventId,
      ...(action === "signon_event" ? { signon_event: signonEventDescriptions[event.eventId] ?? `event ${event.eventId}` } : {}),
      ...(event.message ? { signon_message: event.message.replaceAll("\u0000", "").slice(0, 1000) } : {}),
    },
  };
}
