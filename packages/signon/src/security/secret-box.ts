import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

const algorithm = "aes-256-gcm";
const keyBytes = 32;
const ivBytes = 12;
const tagBytes = 16;
/** Marks the format of a sealed value, so a later format can be told apart. */
const formatPrefix = "v1";

/** A sealed value that does not open with this key: tampered with, truncated, or sealed with another key. */
export class SecretBoxError extends Error {}

/**
 * Encrypts a short secret (an authenticator secret) with AES-256-GCM under a
 * 32-byte key. The result is `v1.<iv>.<tag>.<ciphertext>` in base64url: a
 * fresh random 96-bit IV each time, and the tag proves it was not changed.
 *
 * @see https://nvlpubs.nist.gov/nistpubs/Legacy/SP/nistspecialpublication800-38d.pdf
 */
export function sealSecret(key: Buffer, plaintext: string): string {
  checkKey(key);
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv(algorithm, key, iv, { authTagLength: tagBytes });
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [formatPrefix, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
}

/**
 * Decrypts what `sealSecret` produced with the same key.
 *
 * @throws SecretBoxError when the value is malformed, was changed, or was sealed with another key.
 */
export function openSecret(key: Buffer, sealed: string): string {
  checkKey(key);
  const [prefix, iv, tag, ciphertext, ...rest] = sealed.split(".");
  if (prefix !== formatPrefix || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
    throw new SecretBoxError("not a sealed secret");
  }
  const ivBuffer = Buffer.from(iv, "base64url");
  const tagBuffer = Buffer.from(tag, "base64url");
  if (ivBuffer.length !== ivBytes || tagBuffer.length !== tagBytes) throw new SecretBoxError("not a sealed secret");
  try {
    const decipher = createDecipheriv(algorithm, key, ivBuffer, { authTagLength: tagBytes });
    decipher.setAuthTag(tagBuffer);
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretBoxError("the sealed secret does not open with this key");
  }
}

/** The name of the development key file inside the data directory. */
export const keyFileName = "secret-key";

/**
 * The key that seals authenticator secrets: the configured one, or in
 * development (none configured) the key kept in `<dataDir>/secret-key`,
 * created on first use as 64 hex digits readable by the owner only (0600).
 * Call once at start-up. Two processes starting together agree on one key:
 * the file appears whole, and only the first to create it wins.
 *
 * @throws Error when the key file exists but does not hold 64 hex digits.
 */
export async function resolveSecretKey(configured: Buffer | null, dataDir: string): Promise<Buffer> {
  if (configured !== null) {
    checkKey(configured);
    return configured;
  }
  const path = join(dataDir, keyFileName);
  const existing = await readKeyFile(path);
  if (existing !== null) return existing;
  await mkdir(dataDir, { recursive: true });
  const temporary = join(dataDir, `.${keyFileName}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temporary, `${randomBytes(keyBytes).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    // link() refuses to replace an existing file, so a key another process just created is kept.
    await link(temporary, path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  } finally {
    await rm(temporary, { force: true });
  }
  const created = await readKeyFile(path);
  if (created === null) throw new Error(`${path} could not be created`);
  return created;
}

async function readKeyFile(path: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`${path} must hold 64 hex digits (32 bytes); delete it only if no 2-step secrets were sealed with it`);
  return Buffer.from(hex, "hex");
}

function checkKey(key: Buffer): void {
  if (key.length !== keyBytes) throw new Error(`the secret key must be ${keyBytes} bytes`);
}
