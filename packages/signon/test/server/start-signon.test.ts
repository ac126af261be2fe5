import { afterAll, describe, expect, it } from "vitest";
import { startSignon } from "../../src/server.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
afterAll(() => database.close());

describe("startSignon", () => {
  it("migrates, listens on loopback, serves, and closes", async () => {
    const running = await startSignon({ DATABASE_URL: database.url, SIGNON_PORT: "0", SIGNON_ARGON2_MEMORY_KIB: "64", SIGNON_ARGON2_TIME_COST: "1" }, { logger: false });
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(`${running.url}/.well-known/oauth-authorization-server`);
      expect(response.status).toBe(200);
    } finally {
      await running.close();
    }
    await expect(fetch(`${running.url}/`)).rejects.toThrow();
  });

  it("refuses to start on a non-loopback host in development", async () => {
    await expect(startSignon({ DATABASE_URL: database.url, SIGNON_HOST: "0.0.0.0" })).rejects.toThrow(/SIGNON_HOST/);
  });
});
