import type { RequestOrigin } from "./context.js";
import type { SignonDatabase } from "./db/database.js";
import { insertAuditEvent } from "./repositories/audit-events.js";

/** Security-relevant actions, as stored in `audit_events.action`. */
export type AuditAction =
  | "sign_in"
  | "sign_in_failed"
  | "sign_in_refused"
  | "account_locked"
  | "account_unlocked"
  | "sign_out"
  | "signing_keys_rotated"
  | "oidc_logout"
  | "authorization_code_issued"
  | "authorization_code_replayed"
  | "tokens_issued"
  | "tokens_refreshed"
  | "refresh_token_reused"
  | "token_revoked"
  | "client_authentication_failed"
  | "application_created"
  | "organisation_created"
  | "user_created"
  | "api_user_created"
  | "permissions_granted"
  | "permissions_revoked"
  | "token_issued_by_operator"
  | "user_suspended"
  | "user_unsuspended"
  | "user_updated"
  | "email_change_requested"
  | "email_change_confirmed"
  | "email_change_cancelled"
  | "user_invited"
  | "invitation_accepted"
  | "invitation_batch_started"
  | "password_changed"
  | "password_reset_requested"
  | "password_reset"
  | "two_step_enabled"
  | "two_step_reset"
  | "two_step_failed"
  | "two_step_verified"
  | "passkey_registered"
  | "passkey_removed"
  | "passkey_verified"
  | "passkey_failed"
  | "two_step_required"
  | "two_step_requirement_removed"
  | "two_step_exempted"
  | "two_step_exemption_removed"
  | "organisation_two_step_required"
  | "organisation_two_step_requirement_removed"
  | "role_changed"
  | "application_updated"
  | "application_secret_rotated"
  | "application_retired"
  | "application_unretired"
  | "application_uris_rewritten"
  | "credentials_exported"
  | "organisation_updated"
  | "organisations_imported"
  | "imported_from_signon"
  | "signon_event"
  | "organisation_register_fetched"
  | "application_access_given_up"
  | "api_token_revoked"
  | "api_token_renewed"
  | "renewed_token_acknowledged"
  | "token_auto_renewal_changed"
  | "push_retried"
  | "suspended_for_inactivity"
  | "inactivity_reminder_sent"
  | "unused_invitation_deleted"
  | "sign_in_tokens_revoked"
  | "client_authentication_flood"
  | "identity_provider_connected"
  | "identity_provider_changed"
  | "identity_provider_disconnected"
  | "upstream_identity_linked"
  | "upstream_sign_in_refused"
  | "upstream_logout";

export interface AuditEntry {
  action: AuditAction;
  at: Date;
  actorUid?: string | null;
  subjectUid?: string | null;
  applicationId?: string | null;
  origin?: RequestOrigin | null;
  details?: Record<string, unknown>;
}

/** The user agent as audit events keep it: at most 512 characters. */
export function storedUserAgent(origin: RequestOrigin | null | undefined): string | null {
  return origin?.userAgent?.slice(0, 512) ?? null;
}

/** Records who did what, when, from where and on which application. */
export async function audit(db: SignonDatabase, entry: AuditEntry): Promise<void> {
  await insertAuditEvent(db, {
    action: entry.action,
    occurredAt: entry.at,
    actorUid: entry.actorUid ?? null,
    subjectUid: entry.subjectUid ?? null,
    applicationId: entry.applicationId ?? null,
    ip: entry.origin?.ip ?? null,
    userAgent: storedUserAgent(entry.origin),
    details: entry.details ?? {},
  });
}
