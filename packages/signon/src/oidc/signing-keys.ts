import { and, eq, gt, isNull, lt, or } from "drizzle-orm";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
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
 * How long a retired key stays published: past the life of the last ID token
 * it signed, with a margin for clocks.
 */
export const retiredKeyPublishedSeconds = idTokenLifetimeSeconds + 300;

/** How long a process keeps using the live keys it read before it looks again (another process may have rotated them). */
const liveKeysCacheMs = 60_000;

/** A key to sign with. */
export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: CryptoKey;
}

interface CachedKeys {
  keys: Map<SigningAlgorithm, SigningKey>;
  readAt: number;
}

// Per database (one per server, one per test app): the live keys, so signing costs no query.
const caches = new WeakMap<object, Promise<CachedKeys>>();

function sealingKey(ctx: SignonContext): Promise<Buffer> {
  const key = ctx.secretKey ?? ctx.config.secretKey;
  return key ? Promise.resolve(key) : resolveSecretKey(null, ctx.config.dataDir);
}

/** A new key pair of `alg`, as the row to store: the private JWK sealed under the secret key. */
async function newKeyRow(ctx: SignonContext, alg: SigningAlgorithm, now: Date): Promise<typeof signingKeys.$inferInsert> {
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
 * Replaces the live key of each algorithm by a new one. The old keys stay
 * published at `jwks_uri` for `retiredKeyPublishedSeconds` (every token they
 * signed has expired by then); keys past that are deleted. Returns the new
 * keys' ids.
 */
export async function rotateSigningKeys(ctx: SignonContext, reason: "command" | "schedule"): Promise<{ kid: string; alg: string }[]> {
  const now = ctx.now();
  const rows = await Promise.all(signingAlgorithms.map((alg) => newKeyRow(ctx, alg, now)));
  await ctx.db.transaction(async (tx) => {
    await tx.delete(signingKeys).where(lt(signingKeys.publishUntil, now));
    await tx
      .update(signingKeys)
      .set({ retiredAt: now, publishUntil: new Date(now.getTime() + retiredKeyPublishedSeconds * 1000) })
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

async function readLiveKeys(ctx: SignonContext): Promise<CachedKeys> {
  let rows = await ctx.db.select().from(signingKeys).where(isNull(signingKeys.retiredAt));
  if (rows.length < signingAlgorithms.length) {
    await ensureSigningKeys(ctx);
    rows = await ctx.db.select().from(signingKeys).where(isNull(signingKeys.retiredAt));
  }
  const secret = await sealingKey(ctx);
  const keys = new Map<SigningAlgorithm, SigningKey>();
  for (const row of rows) {
    const alg = row.alg as SigningAlgorithm;
    const privateKey = (await importJWK(JSON.parse(openSecret(secret, row.sealedPrivateJwk)) as JWK, alg)) as CryptoKey;
    keys.set(alg, { kid: row.kid, alg, privateKey });
  }
  return { keys, readAt: Date.now() };
}

/** The live key of `alg`, read from the database at most once a minute per process. */
export async function liveSigningKey(ctx: SignonContext, alg: SigningAlgorithm): Promise<SigningKey> {
  let cached = caches.get(ctx.db);
  if (cached) {
    const held = await cached.catch(() => null);
    if (!held || Date.now() - held.readAt > liveKeysCacheMs) cached = undefined;
  }
  if (!cached) {
    cached = readLiveKeys(ctx);
    caches.set(ctx.db, cached);
    cached.catch(() => caches.delete(ctx.db));
  }
  const key = (await cached).keys.get(alg);
  if (!key) throw new Error(`no live ${alg} signing key`);
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
