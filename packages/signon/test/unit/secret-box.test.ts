import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSecret, resolveSecretKey, sealSecret, SecretBoxError } from "../../src/security/secret-box.js";

const key = Buffer.alloc(32, 7);
const otherKey = Buffer.alloc(32, 8);

describe("sealSecret / openSecret", () => {
  it("opens what it sealed, with a fresh IV each time", () => {
    const first = sealSecret(key, "JBSWY3DPEHPK3PXP");
    const second = sealSecret(key, "JBSWY3DPEHPK3PXP");
    expect(first).not.toBe(second);
    expect(first).not.toContain("JBSWY3DPEHPK3PXP");
    expect(first).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(openSecret(key, first)).toBe("JBSWY3DPEHPK3PXP");
  });

  it("refuses another key, a changed ciphertext and malformed values", () => {
    const sealed = sealSecret(key, "JBSWY3DPEHPK3PXP");
    expect(() => openSecret(otherKey, sealed)).toThrow(SecretBoxError);
    const parts = sealed.split(".");
    const ciphertext = Buffer.from(parts[3] as string, "base64url");
    ciphertext[0] = (ciphertext[0] as number) ^ 1;
    expect(() => openSecret(key, [parts[0], parts[1], parts[2], ciphertext.toString("base64url")].join("."))).toThrow(SecretBoxError);
    for (const malformed of ["", "v1", "v2.a.b.c", `${sealed}.x`, "v1.AAAA.AAAA.AAAA"]) {
      expect(() => openSecret(key, malformed)).toThrow(SecretBoxError);
    }
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => sealSecret(Buffer.alloc(16), "x")).toThrow("32 bytes");
  });
});

describe("resolveSecretKey", () => {
  let dataDir: string | undefined;
  afterEach(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("returns the configured key without touching the data directory", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "secret-key-"));
    expect(await resolveSecretKey(key, dataDir)).toEqual(key);
    await expect(stat(join(dataDir, "secret-key"))).rejects.toThrow();
  });

  it("creates the development key file once, readable by its owner only, and reuses it", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "secret-key-"));
    const directory = join(dataDir, "nested");
    const [first, concurrent] = await Promise.all([resolveSecretKey(null, directory), resolveSecretKey(null, directory)]);
    expect(first).toHaveLength(32);
    expect(concurrent).toEqual(first);
    expect(await resolveSecretKey(null, directory)).toEqual(first);
    const file = join(directory, "secret-key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, "utf8")).trim()).toBe(first.toString("hex"));
  });

  it("refuses a key file that does not hold 64 hex digits", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "secret-key-"));
    await writeFile(join(dataDir, "secret-key"), "not a key\n");
    await expect(resolveSecretKey(null, dataDir)).rejects.toThrow("64 hex digits");
  });
});
