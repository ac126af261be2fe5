import { randomUUID } from "node:crypto";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { startHourlyJob, type HourlyJob, type JobLog, type JobTiming } from "../maintenance/hourly-job.js";
import { insertGrant } from "../repositories/grants.js";
import {
  acknowledgeRenewedTokenRow,
  findGrantsToRenew,
  insertRenewedToken,
  listPendingRenewedTokens,
} from "../repositories/renewed-tokens.js";
import { insertAccessToken } from "../repositories/tokens.js";
import { updateUser, type User } from "../repositories/users.js";
import { randomHex, sha256Hex } from "../security/random.js";
import { openSecret, sealSecret, SecretBoxError } from "../security/secret-box.js";

/** How long before a token expires it is shown as expiring, and the longest renewal window. */
export const tokenExpiryWarningDays = 30;

const dayMs = 86_400_000;
const hourMs = 3_600_000;

/** A renewed token lives at least this long. */
const shortestRenewedLifetimeMs = dayMs;

/**
 * How long before it expires a token issued for `lifetimeMs` is renewed: a
 * third of its lifetime, at most `tokenExpiryWarningDays` (a two-year token
 * 30 days before, a 10-day token 3 days and 8 hours before) and at least two
 * hours, so the hourly job cannot miss it. A renewed token lives as long as
 * the old one (at least a day), so at least two thirds of it remain when it
 * is issued: it is never renewed again until it too is close to expiring.
 */
export function renewalWindowMs(lifetimeMs: number): number {
  return Math.min(tokenExpiryWarningDays * dayMs, Math.max(lifetimeMs / 3, 2 * hourMs));
}

/** The renewal rule in words, for pages and command output. */
export const renewalRuleText = `each token is renewed once, when a third of its lifetime is left (at most ${tokenExpiryWarningDays} days, at least 2 hours before it expires)`;

function sealingKey(ctx: SignonContext): Buffer {
  const key = ctx.secretKey ?? ctx.config.secretKey;
  if (!key) throw new Error("No secret key to seal renewed tokens with");
  return key;
}

/**
 * Issues a new token for every API user's token that is within its renewal
 * window ({@link renewalWindowMs}) when that API user has automatic renewal
 * on, once per token: a new grant on the same application, living as long
 * as the old token was issued for (at least a day), each in its own
 * transaction with a `api_token_renewed` audit event.
 * The old token keeps working until it expires, so the client can switch.
 * The new token is kept sealed under the secret key until an administrator
 * acknowledges it on the API user's page; it is never logged. Returns how
 * many tokens were issued.
 */
export async function renewExpiringApiTokens(ctx: SignonContext): Promise<number> {
  const now = ctx.now();
  const key = sealingKey(ctx);
  let renewed = 0;
  const candidates = await findGrantsToRenew(ctx.db, now, new Date(now.getTime() + tokenExpiryWarningDays * dayMs));
  for (const old of candidates.filter((grant) => grant.expiresAt.getTime() - now.getTime() <= renewalWindowMs(grant.lifetimeMs))) {
    const token = randomHex();
    const expiresAt = new Date(now.getTime() + Math.max(old.lifetimeMs, shortestRenewedLifetimeMs));
    const grantId = randomUUID();
    await ctx.db.transaction(async (tx) => {
      await insertGrant(tx, { id: grantId, kind: "issued", userUid: old.userUid, applicationId: old.applicationId, createdAt: now });
      await insertAccessToken(tx, { grantId, tokenHash: sha256Hex(token), userUid: old.userUid, applicationId: old.applicationId, expiresAt, createdAt: now });
      await insertRenewedToken(tx, {
        grantId,
        replacesGrantId: old.grantId,
        userUid: old.userUid,
        applicationId: old.applicationId,
        tokenSealed: sealSecret(key, token),
        createdAt: now,
      });
      await audit(tx, {
        action: "api_token_renewed",
        at: now,
        subjectUid: old.userUid,
        applicationId: old.applicationId,
        details: { replaces_grant_id: old.grantId, grant_id: grantId, old_expires_at: old.expiresAt.toISOString(), expires_at: expiresAt.toISOString() },
      });
    });
    renewed += 1;
  }
  return renewed;
}

/** A renewed token waiting for an administrator, opened for showing. */
export interface RenewedTokenToShow {
  grantId: string;
  application: string;
  createdAt: Date;
  expiresAt: Date | null;
  /** The token, or `null` when it does not open with the current secret key (the key was changed). */
  token: string | null;
}

/** The renewed tokens of an API user that no administrator has acknowledged yet. */
export async function renewedTokensToShow(ctx: SignonContext, userUid: string): Promise<RenewedTokenToShow[]> {
  const key = sealingKey(ctx);
  return (await listPendingRenewedTokens(ctx.db, userUid)).map((pending) => {
    let token: string | null = null;
    try {
      token = openSecret(key, pending.tokenSealed);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
    }
    return { grantId: pending.grantId, application: pending.application, createdAt: pending.createdAt, expiresAt: pending.expiresAt, token };
  });
}

/** An administrator has copied a renewed token: it is forgotten (only its digest stays) and no longer shown. `false` when none was waiting. */
export async function acknowledgeRenewedToken(
  ctx: SignonContext,
  apiUser: User,
  grantId: string,
  actor: { uid: string | null; origin: RequestOrigin | null },
): Promise<boolean> {
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const row = await acknowledgeRenewedTokenRow(tx, apiUser.uid, grantId, now, actor.uid);
    if (!row) return false;
    await audit(tx, {
      action: "renewed_token_acknowledged",
      at: now,
      actorUid: actor.uid,
      subjectUid: apiUser.uid,
      applicationId: row.applicationId,
      origin: actor.origin,
      details: { grant_id: grantId },
    });
    return true;
  });
}

/** Turns automatic token renewal of an API user on or off (audited when it changes). Returns the user afterwards. */
export async function setTokenAutoRenewal(
  ctx: SignonContext,
  apiUser: User,
  on: boolean,
  actor: { uid: string | null; origin: RequestOrigin | null },
): Promise<User> {
  if (apiUser.tokenAutoRenewal === on) return apiUser;
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const updated = await updateUser(tx, apiUser.uid, { tokenAutoRenewal: on, updatedAt: now });
    await audit(tx, { action: "token_auto_renewal_changed", at: now, actorUid: actor.uid, subjectUid: apiUser.uid, origin: actor.origin, details: { on } });
    return updated ?? apiUser;
  });
}

/** Runs `renewExpiringApiTokens` shortly after start and then hourly (see {@link startHourlyJob}). */
export function startTokenRenewalJob(ctx: SignonContext, options: JobTiming & { log: JobLog }): HourlyJob {
  return startHourlyJob(
    "Token renewal",
    async () => {
      const renewed = await renewExpiringApiTokens(ctx);
      // How many, never which token.
      if (renewed > 0) options.log.info(`Renewed ${renewed} API token(s) close to expiring; administrators see them on the API users' pages`);
    },
    options,
  );
}
