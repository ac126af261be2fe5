/** An audit event as the "recent activity" list needs it. */
export interface ActivityEvent {
  action: string;
  actorUid: string | null;
  subjectUid: string | null;
  applicationName: string | null;
  details: Record<string, unknown>;
}

const aboutYou: Record<string, string> = {
  sign_in: "You signed in",
  sign_in_failed: "Someone tried to sign in with a wrong password",
  sign_in_refused: "A sign-in was refused",
  account_locked: "Your account was locked after too many failed sign-ins",
  account_unlocked: "Your account was unlocked",
  sign_out: "You signed out",
  // A sign-in counts once the application exchanges the code, as everywhere else (pushes/fan-out-words.ts).
  authorization_code_issued: "A sign-in code was issued for an application",
  tokens_issued: "You signed in to an application: it issued you a token",
  tokens_refreshed: "An application renewed its access for you",
  token_revoked: "An application's access for you was revoked",
  user_created: "Your account was created",
  permissions_granted: "You were given permissions",
  permissions_revoked: "Permissions were taken away from you",
  token_issued_by_operator: "An access token was issued for you",
  user_suspended: "Your account was suspended",
  user_unsuspended: "Your suspension was lifted",
  user_updated: "Your details were changed",
  email_change_requested: "A change of your e-mail address was asked for",
  email_change_confirmed: "Your e-mail address was changed",
  email_change_cancelled: "A change of your e-mail address was cancelled",
  user_invited: "You were invited",
  invitation_accepted: "You accepted your invitation and chose a password",
  password_changed: "You changed your password",
  password_reset_requested: "A password reset link was asked for",
  password_reset: "Your password was reset through an e-mailed link",
  two_step_enabled: "You turned on 2-step verification",
  two_step_reset: "Your 2-step verification was reset",
  two_step_failed: "A wrong 2-step verification code was entered",
  two_step_verified: "You entered a 2-step verification code",
  passkey_registered: "You added a passkey",
  passkey_removed: "You removed a passkey",
  passkey_verified: "You used a passkey",
  passkey_failed: "A passkey was refused",
  two_step_required: "You are now required to use 2-step verification",
  two_step_requirement_removed: "You are no longer required to use 2-step verification",
  two_step_exempted: "You were exempted from 2-step verification for a while",
  two_step_exemption_removed: "Your exemption from 2-step verification was removed",
  role_changed: "Your role was changed",
  suspended_for_inactivity: "Your account was suspended because it was not used for a long time",
  inactivity_reminder_sent: "You were reminded by e-mail that your account would be suspended if not used",
  sign_in_tokens_revoked: "You were signed out of every application and every other browser",
  application_access_given_up: "You gave up your access to an application",
};

const byYou: Record<string, string> = {
  user_created: "You created an account",
  user_invited: "You invited someone",
  user_updated: "You changed someone's details",
  email_change_requested: "You asked to change someone's e-mail address",
  email_change_confirmed: "You changed someone's e-mail address",
  email_change_cancelled: "You cancelled a change of someone's e-mail address",
  user_suspended: "You suspended someone",
  user_unsuspended: "You lifted someone's suspension",
  account_unlocked: "You unlocked someone's account",
  permissions_granted: "You gave someone permissions",
  permissions_revoked: "You took permissions away from someone",
  role_changed: "You changed someone's role",
  two_step_reset: "You reset someone's 2-step verification",
  two_step_required: "You required someone to use 2-step verification",
  two_step_requirement_removed: "You stopped requiring someone to use 2-step verification",
  two_step_exempted: "You exempted someone from 2-step verification",
  two_step_exemption_removed: "You removed someone's exemption from 2-step verification",
  organisation_two_step_required: "You required an organisation's people to use 2-step verification",
  organisation_two_step_requirement_removed: "You stopped requiring an organisation's people to use 2-step verification",
  application_created: "You registered an application",
  application_updated: "You changed an application",
  application_secret_rotated: "You replaced an application's secret",
  application_retired: "You retired an application",
  application_unretired: "You brought back a retired application",
  organisation_created: "You created an organisation",
  organisation_updated: "You changed an organisation",
  api_user_created: "You created an API user",
  api_token_revoked: "You revoked an API token",
  token_issued_by_operator: "You issued an API token",
  push_retried: "You retried a push to an application",
};

/**
 * Says in plain words what an audit event means for the person reading
 * their own account page (`userUid`): something done to them, or by them
 * to someone or something else.
 */
export function describeActivity(event: ActivityEvent, userUid: string): string {
  const toYou = event.subjectUid === userUid;
  const base = (toYou ? aboutYou[event.action] : byYou[event.action]) ?? aboutYou[event.action] ?? `Event: ${event.action.replace(/_/g, " ")}`;
  const onApplication = event.applicationName ? ` (${event.applicationName})` : "";
  const byAdministrator = toYou && event.actorUid !== null && event.actorUid !== userUid ? " by an administrator" : "";
  return `${base}${byAdministrator}${onApplication}`;
}
