import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/accounts/password.js";

const cheap = { memoryCost: 64, timeCost: 1, parallelism: 1 };

describe("password hashing", () => {
  it("stores an argon2id hash that verifies the same password only", async () => {
    const stored = await hashPassword("correct horse battery staple", cheap);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
    expect(await verifyPassword(stored, "correct horse battery staple", cheap)).toBe(true);
    expect(await verifyPassword(stored, "correct horse battery stapler", cheap)).toBe(false);
  });

  it("refuses when there is no stored hash or it is corrupt", async () => {
    expect(await verifyPassword(null, "anything", cheap)).toBe(false);
    expect(await verifyPassword("not a hash", "anything", cheap)).toBe(false);
  });
});
