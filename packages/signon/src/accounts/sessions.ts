import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { queuePushes } from "../repositories/push-deliveries.js";
import { pushesCommitted } from "../pushes/queue.js";
import { deleteSession, findSession, insertSession, touchSession, type Session } from "../repositories/sessions.js";
import { recordSignIn, type User } from "../repositories/users.js";
import { randomHex, sha256Hex } from "../security/random.js";
import { withAdministrationScope, type ScopedActor } from "./administration-scope.js";
import { mustSetUpTwoStep } from "./two-step-mandate.js";

/**
 * How a person proved who they are, as RFC 8176 `amr` values. Sign-on's own
 * are `pwd` a password, `otp` a code from an authenticator app, `hwk` a
 * passkey (a key held in hardware or by the platform, used with the person's
 * presence); a sign-in through an organisation's provider records the
 * registered values the provider reported (`mfa`, `swk`, `sms`, …).
 *
 * @see https://www.rfc-editor.org/rfc/rfc8176#section-2
 */
export const authenticationMethods = [
  "face", "fpt", "geo", "hwk", "iris", "kba", "mca", "mfa", "otp", "pin", "pop", "pwd", "rba", "retina", "sc", "sms", "swk", "tel", "user", "vbm", "wia",
] as const;
export type AuthenticationMethod = (typeof authenticationMethods)[number];

/** Methods that say several factors were used. */
const multiFactorMethods: ReadonlySet<string> = new Set(["mfa", "mca"]);
/** Something the person has or is: with another method, a second factor. */
const possessionOrInherence: ReadonlySet<string> = new Set(["otp", "hwk", "swk", "sms", "tel", "sc", "face", "fpt", "iris", "retina", "vbm"]);

/**
 * Whether a sign-in's methods show a second factor: `mfa` or `mca`; a passkey (`hwk`: a key held by a device, used
 * with the person's presence); or two or more methods of which one is something the person has or is (a one-time
 * code, a key, a fingerprint, …). Knowledge and risk checks (`kba`, `rba`, `geo`, `user`) do not count, nor a code
 * alone.
 */
export function showsSecondFactor(methods: readonly string[]): boolean {
  if (methods.some((method) => multiFactorMethods.has(method)) || methods.includes("hwk")) return true;
  return new Set(methods).size >= 2 && methods.some((method) => possessionOrInherence.has(method));
}

/** A sign-in through an organisation's provider: which provider, and its session id (`sid`, SAML `SessionIndex`) if it gave one. */
export interface UpstreamSession {
  providerId: string;
  sessionId: string | null;
}

/**
 * Starts a session after sign-in with a fresh id (no fixation: any session
 * the browser had is deleted). Returns the id for the cookie; only its
 * SHA-256 digest is stored. `methods` records how the person signed in
 * (default: a password), in the order used.
 */
export async function startSession(
  ctx: SignonContext,
  user: User,
  previousSessionId: string | undefined,
  origin: RequestOrigin,
  options: { awaitingSecondFactor?: boolean; methods?: readonly AuthenticationMethod[]; upstream?: UpstreamSession | null } = {},
): Promise<string> {
  const id = randomHex();
  const now = ctx.now();
  const awaitingSecondFactor = options.awaitingSecondFactor ?? false;
  const methods = [...(options.methods ?? ["pwd"])];
  await ctx.db.transaction(async (tx) => {
    if (previousSessionId) await deleteSession(tx, sha256Hex(previousSessionId));
    await insertSession(tx, {
      idHash: sha256Hex(id),
      userUid: user.uid,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + ctx.config.sessionMaxSeconds * 1000),
      ip: origin.ip,
      userAgent: origin.userAgent?.slice(0, 512) ?? null,
      awaitingSecondFactor,
      authenticationMethods: methods,
      upstreamProviderId: options.upstream?.providerId ?? null,
      upstreamSessionId: options.upstream?.sessionId ?? null,
    });
    if (!awaitingSecondFactor) await signInCompleted(tx, user, now, origin, methods);
  });
  return id;
}

/** Records a completed sign-in: the audit event and the user's last sign-in time (read by the inactivity job). */
export async function signInCompleted(
  db: SignonContext["db"],
  user: User,
  now: Date,
  origin: RequestOrigin,
  methods: readonly AuthenticationMethod[] = ["pwd"],
): Promise<void> {
  await recordSignIn(db, user.uid, now);
  await audit(db, { action: "sign_in", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details: { methods: [...methods] } });
}

/** A live session of the web interface: its user, the digest of its id, and a flash message waiting to be shown. */
export interface WebSession {
  /** The user; an organisation-scoped administrator's with what they administer (see `withAdministrationScope`). */
  user: ScopedActor;
  idHash: string;
  awaitingSecondFactor: boolean;
  /** 2-step verification is required of the user and not set up: every page but its set-up sends them there. */
  twoStepSetUpRequired: boolean;
  /** How the person signed in (RFC 8176 `amr` values), in the order used; empty for sessions older than this record. */
  authenticationMethods: AuthenticationMethod[];
  /** Signed in through the organisation's provider. */
  upstream: UpstreamSession | null;
  flash: Session["flash"];
  /** When the person signed in (OpenID Connect `auth_time`), and how (`amr`). */
  authTime: Date;
  amr: readonly string[];
  /**
   * Read on a replica while the primary could not be reached (see
   * `resolveWebSessionOnReplica`): nothing may be written for it, its flash
   * message included.
   */
  readOnly?: boolean;
}

/**
 * How long a session's "last seen" may lag behind its use: a minute, or a
 * thirtieth of the idle timeout when that is shorter. Written on every
 * request it would cost each page a write and a commit; lagging, a session
 * can end up to this much before its idle timeout, never after it.
 */
function touchIntervalMs(sessionIdleSeconds: number): number {
  return Math.min(60, sessionIdleSeconds / 30) * 1000;
}

/**
 * The live session for a session id, including one still waiting for its
 * 2-step code, or `null`. A session dies after `sessionIdleSeconds` without
 * use, `sessionMaxSeconds` after sign-in, or when its user is suspended.
 */
export async function resolveWebSession(ctx: SignonContext, sessionId: string | undefined, readOnly = false): Promise<WebSession | null> {
  if (!sessionId || !/^[0-9a-f]{64}$/.test(sessionId)) return null;
  const idHash = sha256Hex(sessionId);
  const found = await findSession(ctx.db, idHash);
  if (!found) return null;
  const now = ctx.now();
  const idleUntil = found.session.lastSeenAt.getTime() + ctx.config.sessionIdleSeconds * 1000;
  if (idleUntil <= now.getTime() || found.session.expiresAt <= now || found.user.suspendedAt !== null) {
    if (!readOnly) await deleteSession(ctx.db, idHash);
    return null;
  }
  if (!readOnly && now.getTime() - found.session.lastSeenAt.getTime() >= touchIntervalMs(ctx.config.sessionIdleSeconds)) await touchSession(ctx.db, idHash, now);
  const user = await withAdministrationScope(ctx.db, found.user);
  const authenticationMethods = found.session.authenticationMethods.filter(isAuthenticationMethod);
  return {
    user,
    idHash,
    awaitingSecondFactor: found.session.awaitingSecondFactor,
    // A provider's sign-in that showed a second factor meets the requirement.
    twoStepSetUpRequired: !showsSecondFactor(authenticationMethods) && mustSetUpTwoStep(ctx.config, found.user, found.organisationRequiresTwoStep, now),
    authenticationMethods,
    upstream: found.session.upstreamProviderId === null ? null : { providerId: found.session.upstreamProviderId, sessionId: found.session.upstreamSessionId },
    flash: found.session.flash,
    authTime: found.session.createdAt,
    // A session older than the record of its methods was a password sign-in; a provider may report none.
    amr: authenticationMethods.length > 0 || found.session.upstreamProviderId !== null ? authenticationMethods : ["pwd"],
    ...(readOnly ? { readOnly: true } : {}),
  };
}

/**
 * The session as a replica has it, for a list read while the primary cannot
 * be reached (a failover): read only, so it neither ends an expired session
 * nor marks this use. A session ended on the primary less than the replica's
 * lag before (at most `DATABASE_READ_MAX_LAG_MS`) may still read lists here;
 * nothing else is served this way. `undefined` when no replica is fit to read.
 */
export async function resolveWebSessionOnReplica(ctx: SignonContext, sessionId: string | undefined): Promise<WebSession | null | undefined> {
  const replica = ctx.forRead?.();
  if (replica === undefined || replica === ctx) return undefined;
  return resolveWebSession(replica, sessionId, true);
}

/**
 * The user of a live, fully signed-in session, or `null` (also while the
 * session waits for its 2-step code). The user may still have to set up
 * 2-step verification (`WebSession.twoStepSetUpRequired`).
 */
export async function resolveSession(ctx: SignonContext, sessionId: string | undefined): Promise<User | null> {
  const session = await resolveWebSession(ctx, sessionId);
  return session && !session.awaitingSecondFactor ? session.user : null;
}

/** Ends a session (sign-out) and queues a reauth to every application the user used (S13). */
export async function endSession(ctx: SignonContext, sessionId: string | undefined, origin: RequestOrigin): Promise<void> {
  if (!sessionId) return;
  const idHash = sha256Hex(sessionId);
  const found = await findSession(ctx.db, idHash);
  if (!found) return;
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    await deleteSession(tx, idHash);
    await audit(tx, { action: "sign_out", at: now, actorUid: found.user.uid, subjectUid: found.user.uid, origin });
    await queuePushes(tx, { userUid: found.user.uid, kinds: ["reauth"], targets: { applicationsOfUser: ctx.config.pushes.fanOut }, now });
  });
  pushesCommitted(ctx);
}

export function isAuthenticationMethod(value: string): value is AuthenticationMethod {
  return (authenticationMethods as readonly string[]).includes(value);
}
