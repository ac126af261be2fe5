import { and, desc, eq, gt, isNull, lt, or } from "drizzle-orm";
import { createPrivateKey, type JsonWebKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";
import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { signingKeys } from "../db/schema.js";
import { openSecret, resolveSecretKey, sealSecret } from "../security/secret-box.js";

/** The JWS algorithms of ID tokens and logout tokens. */
export const signingAlgorithms = ["ES256", "RS256"] as const;
export type SigningAlgorithm = (typeof signingAlgorithms)[number];

/** ID tokens live an hour. */
export const idTokenLifetimeSeconds = 3600;

/**
 * How long a new key is published before it signs: a client that fetched the
 * JWKS just before a rotation fetches it again when it meets the new key id
 * (openid-client and oauth4webapi do once their copy is a minute old).
 */
export const keyActivationSeconds = 60;

/**
 * How long a retired key stays published: until it stops signing, then past
 * the life of the last ID token it signed, with a margin for clocks.
 */
export const retiredKeyPublishedSeconds = keyActivationSeconds + idTokenLifetimeSeconds + 300;

/** How long a process keeps using the live keys it read before it looks again (another process may have rotated them). */
const liveKeysCacheMs = 60_000;

/** A key to sign with: its id (the tokens' `kid`), its algorithm and the private key. */
export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: KeyObject;
}

interface CachedKeys {
  keys: Map<SigningAlgorithm, SigningKey>;
  /** Read again after this (ms since the epoch, on the context's clock): a minute on, or when a published key starts to sign. */
  until: number;
}

// Per database (one per server, one per test app): the live keys, so signing costs no query.
const caches = new WeakMap<object, Promise<CachedKeys>>();

function sealingKey(ctx: SignonContext): Promise<Buffer> {
  const key = ctx.secretKey ?? ctx.config.secretKey;
  return key ? Promise.resolve(key) : resolveSecretKey(null, ctx.config.dataDir);
}

/** A new key pair of `alg`, as the row to store: the private JWK sealed under the secret key. */
async function newKeyRow(ctx: SignonContext, alg: SigningAlgorithm, now: Date, activeFrom: Date = now): Promise<typeof signingKeys.$inferInsert> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === "RS256" ? { modulusLength: 2048 } : {}) });
  const publicJwk = await exportJWK(publicKey);
  // The thumbprint and the creation time: a new key never takes the id of an earlier one.
  const kid = `${(await calculateJwkThumbprint(publicJwk)).slice(0, 16)}${now.getTime().toString(36)}`;
  const privateJwk = await exportJWK(privateKey);
  return {
    kid,
    alg,
    publicJwk: { ...publicJwk, kid, alg, use: "sig" },
    sealedPrivateJwk: sealSecret(await sealingKey(ctx), JSON.stringify(privateJwk)),
    createdAt: now,
    activeFrom,
  };
}

/**
 * Makes sure there is a live key for each algorithm, generating the missing
 * ones (first start). Two processes starting together agree: the unique index
 * on live keys keeps only the first one's.
 */
export async function ensureSigningKeys(ctx: SignonContext): Promise<void> {
  const now = ctx.now();
  const live = await ctx.db.select({ alg: signingKeys.alg }).from(signingKeys).where(isNull(signingKeys.retiredAt));
  let generated = false;
  for (const alg of signingAlgorithms) {
    if (live.some((row) => row.alg === alg)) continue;
    await ctx.db.insert(signingKeys).values(await newKeyRow(ctx, alg, now)).onConflictDoNothing();
    generated = true;
  }
  if (generated) caches.delete(ctx.db);
}

/** Forgets this process's copy of the live keys (the next signature reads them again); for tests that empty the database. */
export function forgetCachedSigningKeys(ctx: Pick<SignonContext, "db">): void {
  caches.delete(ctx.db);
}

/**
 * Replaces the live key of each algorithm by a new one, published at once and
 * signing `activationSeconds` later (`keyActivationSeconds`; the old key signs
 * until then). The old keys stay published for `retiredKeyPublishedSeconds`
 * (every token they signed has expired by then); keys past that are deleted.
 * Returns the new keys' ids.
 */
export async function rotateSigningKeys(
  ctx: SignonContext,
  reason: "command" | "schedule",
  activationSeconds: number = keyActivationSeconds,
): Promise<{ kid: string; alg: string }[]> {
  const now = ctx.now();
  const activeFrom = new Date(now.getTime() + activationSeconds * 1000);
  const rows = await Promise.all(signingAlgorithms.map((alg) => newKeyRow(ctx, alg, now, activeFrom)));
  await ctx.db.transaction(async (tx) => {
    await tx.delete(signingKeys).where(lt(signingKeys.publishUntil, now));
    await tx
      .update(signingKeys)
      .set({ retiredAt: now, publishUntil: new Date(activeFrom.getTime() + (retiredKeyPublishedSeconds - keyActivationSeconds) * 1000) })
      .where(isNull(signingKeys.retiredAt));
    await tx.insert(signingKeys).values(rows);
    await audit(tx, { action: "signing_keys_rotated", at: now, origin: { ip: null, userAgent: null }, details: { reason, kids: rows.map((row) => row.kid) } });
  });
  caches.delete(ctx.db);
  return rows.map((row) => ({ kid: row.kid, alg: row.alg }));
}

/** Rotates the keys when the live ones are older than `signingKeyRotationDays` (the hourly job). Whether it did. */
export async function rotateSigningKeysIfDue(ctx: SignonContext): Promise<boolean> {
  const now = ctx.now();
  const dueBefore = new Date(now.getTime() - ctx.config.signingKeyRotationDays * 86_400_000);
  const old = await ctx.db
    .select({ kid: signingKeys.kid })
    .from(signingKeys)
    .where(and(isNull(signingKeys.retiredAt), lt(signingKeys.createdAt, dueBefore)))
    .limit(1);
  if (old.length === 0) return false;
  await rotateSigningKeys(ctx, "schedule");
  return true;
}

/** The public keys to publish: the live ones and the retired ones still within their time. */
export async function publishedKeys(ctx: SignonContext): Promise<JWK[]> {
  const read = () => ctx.db
    .select({ publicJwk: signingKeys.publicJwk })
    .from(signingKeys)
    .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.publishUntil, ctx.now())))
    .orderBy(signingKeys.createdAt);
  let rows = await read();
  // Before the first start generated them (a database set up by other means): generate them now.
  if (rows.length === 0) {
    await ensureSigningKeys(ctx);
    rows = await read();
  }
  return rows.map((row) => row.publicJwk as JWK);
}

/**
 * The key each algorithm signs with now: the newest published key already
 * active (a retired one keeps signing until its successor is active), and
 * when the next key becomes active.
 */
async function readLiveKeys(ctx: SignonContext): Promise<CachedKeys> {
  const now = ctx.now();
  const read = () =>
    ctx.db
      .select()
      .from(signingKeys)
      .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.publishUntil, now)))
      .orderBy(desc(signingKeys.activeFrom));
  let rows = await read();
  if (signingAlgorithms.some((alg) => !rows.some((row) => row.alg === alg && row.retiredAt === null))) {
    await ensureSigningKeys(ctx);
    rows = await read();
  }
  const secret = await sealingKey(ctx);
  const keys = new Map<SigningAlgorithm, SigningKey>();
  let until = now.getTime() + liveKeysCacheMs;
  for (const alg of signingAlgorithms) {
    const ofAlg = rows.filter((row) => row.alg === alg);
    const row = ofAlg.find((candidate) => candidate.activeFrom <= now) ?? ofAlg.at(-1);
    if (!row) continue;
    for (const pending of ofAlg) if (pending.activeFrom > now) until = Math.min(until, pending.activeFrom.getTime());
    const privateKey = createPrivateKey({ key: JSON.parse(openSecret(secret, row.sealedPrivateJwk)) as JsonWebKey, format: "jwk" });
    keys.set(alg, { kid: row.kid, alg, privateKey });
  }
  return { keys, until };
}

/** The key `alg` signs with now, read from the database at most once a minute per process (and when a new key becomes active). */
export async function liveSigningKey(ctx: SignonContext, alg: SigningAlgorithm): Promise<SigningKey> {
  let cached = caches.get(ctx.db);
  if (cached) {
    const held = await cached.catch(() => null);
    if (!held || ctx.now().getTime() >= held.until) cached = undefined;
  }
  if (!cached) {
    cached = readLiveKeys(ctx);
    caches.set(ctx.db, cached);
    cached.catch(() => caches.delete(ctx.db));
  }
  const key = (await cached).keys.get(alg);
  if (!key) throw new Error(`no ${alg} signing key`);
  return key;
}

/** Whether a key id is one this server published and still publishes. */
export async function isPublishedKid(ctx: SignonContext, kid: string): Promise<boolean> {
  const [row] = await ctx.db
    .select({ kid: signingKeys.kid })
    .from(signingKeys)
    .where(and(eq(signingKeys.kid, kid), or(isNull(signingKeys.retiredAt), gt(signingKeys.publishUntil, ctx.now()))))
    .limit(1);
  return row !== undefined;
}
