import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedDatabase } from "../src/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import { queryOnce } from "./support/query-once.js";

let parent: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-embedded-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe("startEmbeddedDatabase", () => {
  it("creates the cluster and the services' database, and finds them again at the next start", async () => {
    const home = join(parent, "fresh");
    const first = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    try {
      expect(first.conversion).toBeUndefined();
      expect(await queryOnce(first.url, "SELECT current_database() AS name")).toEqual([{ name: "tessera" }]);
      await queryOnce(first.url, "CREATE TABLE kept AS SELECT 42 AS answer");
    } finally {
      await first.stop();
    }
    const again = await startEmbeddedDatabase({ home, migrations: [fixtureMigrations] });
    try {
      expect(await queryOnce(again.url, "SELECT answer FROM kept")).toEqual([{ answer: 42 }]);
    } finally {
      await again.stop();
    }
  });
});
