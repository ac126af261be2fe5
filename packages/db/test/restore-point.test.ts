import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, describeRestorePoint, restorePointName, setRestorePoint } from "../src/index.js";
import { dropDatabase, recreateDatabase, testServerUrl } from "../src/testing/index.js";

// Runs on the test run's embedded server (which archives no WAL), or on DATABASE_URL's server when it is set. The
// failover drills (tests/failover/backup.test.ts) set one on an archiving cluster and restore to it.
const scratchName = `tessera_db_restore_point_w${process.env["VITEST_POOL_ID"] ?? process.pid}`;

let pool: pg.Pool;

beforeAll(async () => {
  pool = createPool({ url: await recreateDatabase(testServerUrl(), scratchName), max: 2 });
});

afterAll(async () => {
  await pool.end();
  await dropDatabase(testServerUrl(), scratchName);
});

describe("restorePointName", () => {
  it("names what is about to happen and when, to the second, in UTC", () => {
    expect(restorePointName("signon-migrate", new Date("2026-12-06T20:15:07.123Z"))).toBe("signon-migrate-20261206T201507Z");
  });
});

describe("setRestorePoint", () => {
  it("sets none where the server does not archive its WAL, and says why", async () => {
    const archiveMode = (await pool.query<{ mode: string }>("select current_setting('archive_mode') as mode")).rows[0]?.mode;
    const outcome = await setRestorePoint(pool, "before-a-test");
    if (archiveMode === "off") {
      expect(outcome).toEqual({ set: false, name: "before-a-test", reason: "this server does not archive its WAL (archive_mode is off), so nothing could be restored to it" });
      expect(describeRestorePoint(outcome)).toBe("Set no restore point: this server does not archive its WAL (archive_mode is off), so nothing could be restored to it.");
    } else {
      expect(outcome).toEqual({ set: true, name: "before-a-test", lsn: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/) });
    }
  });

  it("refuses a name PostgreSQL would refuse (over 63 bytes) or that holds control characters, before asking the server", async () => {
    for (const name of ["", "x".repeat(64), "é".repeat(32), "line\nbreak"]) {
      expect(await setRestorePoint(pool, name)).toEqual({ set: false, name, reason: "a restore point's name is 1 to 63 bytes, with no control characters" });
    }
  });
});
