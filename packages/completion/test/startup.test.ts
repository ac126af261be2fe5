import { useTestDatabase } from "@tessera/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";
import { COMPLETION_MIGRATIONS } from "../src/db/database.js";
import { openCompletionDatabase } from "../src/startup.js";

const database = await useTestDatabase({ migrations: [COMPLETION_MIGRATIONS] });
afterAll(() => database.close());
const quiet = { info: () => undefined, warn: () => undefined };

describe("openCompletionDatabase", () => {
  it.each([
    ["DATABASE_POOL_SIZE when set", { DATABASE_POOL_SIZE: "3" }, 3],
    ["10 connections by default when DATABASE_URL is set", {}, 10],
  ])("opens %s", async (_name, env, max) => {
    const opened = await openCompletionDatabase(readConfig({ DATABASE_URL: database.url, ...env }), quiet);
    try {
      expect(opened.pool.options.max).toBe(max);
      const held = await Promise.all(Array.from({ length: max }, () => opened.pool.connect()));
      expect(opened.pool.totalCount).toBe(max);
      for (const client of held) client.release();
    } finally {
      await opened.close();
    }
  });
});
