// startDatabase when the database is down at start-up (a service started
// before PostgreSQL, or during a restart) and when it is misconfigured.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseStartError, isDatabaseUnavailable, startDatabase, type Logger } from "../src/index.js";
import { FaultProxy, useTestDatabase } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

const t = await useTestDatabase({ migrations: [fixtureMigrations], schema });
let proxy: FaultProxy;

beforeAll(async () => {
  proxy = await FaultProxy.start(t.url);
});
afterAll(async () => {
  await proxy.close();
  await t.close();
});

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (message) => lines.push(`info ${message}`), warn: (message) => lines.push(`warn ${message}`) };
}

/** Polls every 50 ms until `condition` holds (at most 20 s). */
async function until(condition: () => boolean): Promise<void> {
  for (let n = 0; n < 400 && !condition(); n++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(condition()).toBe(true);
}

describe("startDatabase while the server cannot be reached", () => {
  it("waits with waitWhileUnavailable, logs one line for the outage, and starts when the server returns", async () => {
    await proxy.refuse();
    const log = recordingLogger();
    let started = false;
    const starting = startDatabase({ url: proxy.urlFor(t.url), log, migrations: [fixtureMigrations], schema, waitWhileUnavailable: true }).finally(() => (started = true));
    try {
      await until(() => log.lines.length > 0);
      // Several retries pass while it is refused: still waiting, still one line.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(started).toBe(false);
      expect(log.lines).toEqual([expect.stringMatching(new RegExp(`^warn database unavailable at 127\\.0\\.0\\.1:${proxy.port} \\(.*ECONNREFUSED.*\\), retrying until it answers$`))]);
    } finally {
      await proxy.accept();
    }
    const database = await starting;
    try {
      expect(log.lines).toHaveLength(2);
      expect(log.lines[1]).toMatch(new RegExp(`^info database: reached 127\\.0\\.0\\.1:${proxy.port} after \\d+\\.\\d s \\(\\d+ failed attempt\\(s\\)\\)$`));
      await database.db.insert(schema.notes).values({ title: "after the wait" });
      expect((await database.db.select({ title: schema.notes.title }).from(schema.notes)).map((row) => row.title)).toContain("after the wait");
    } finally {
      await database.close();
    }
  });

  it("fails with the driver's error without waitWhileUnavailable", async () => {
    await proxy.refuse();
    try {
      const error = await startDatabase({ url: proxy.urlFor(t.url), migrations: [fixtureMigrations] }).then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await proxy.accept();
    }
  });
});

describe.skipIf(t.kind !== "postgres")("startDatabase on a database it cannot use as configured", () => {
  /** The rejection of starting on `url`, waiting while unavailable (which a configuration mistake must not do). */
  async function startFailure(url: string): Promise<unknown> {
    return startDatabase({ url, migrations: [fixtureMigrations], waitWhileUnavailable: true }).then(
      async (database) => {
        await database.close();
        throw new Error("expected a failure");
      },
      (error: unknown) => error,
    );
  }

  it("says in one sentence that the database does not exist", async () => {
    const url = new URL(t.url);
    url.pathname = "/tessera_no_such_database";
    const error = await startFailure(url.toString());
    expect(error).toBeInstanceOf(DatabaseStartError);
    expect((error as Error).message).toMatch(
      /^The database tessera_no_such_database at [^ ]+ cannot be used as [^:]+: 3D000 database "tessera_no_such_database" does not exist; create the database tessera_no_such_database or fix its name in DATABASE_URL\.$/,
    );
  });

  it("says in one sentence that the server refuses the login", async () => {
    const url = new URL(t.url);
    url.username = "tessera_no_such_role";
    url.password = "wrong password";
    const error = await startFailure(url.toString());
    expect(error).toBeInstanceOf(DatabaseStartError);
    expect((error as Error).message).toMatch(/ cannot be used as tessera_no_such_role: 28\w{3} .+; check the user \(tessera_no_such_role\) and password in DATABASE_URL and the server's pg_hba\.conf\.$/);
    expect((error as Error).message).not.toContain("wrong password");
  });
});
