// npm start on a ./data written by the PGlite version (commit 8cb49b4, see fixtures/pglite-era/README.md):
// the first start of today's version converts it into the embedded PostgreSQL server, and today's
// services (later migrations applied at their start) work on the converted rows.
import { chmod, mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, removeDataFolder } from "@tessera/db/testing";
import pg from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractTarBr } from "./support/extract-fixture.js";
import { runStart, type StartRun } from "@tessera/test-support";

const fixture = new URL("./fixtures/pglite-era/data.tar.br", import.meta.url).pathname;
/** What that installation's first start printed, once (fixtures/pglite-era/README.md). */
const earlier = {
  adminEmail: "admin@example.com",
  password: "RDKq5gPxnogZGXSDBVxWHaKw",
  token: "dddbdbc593bfdc087430c7a72692a7789dad79ae48334a0b9239305c18bff675",
  courseKey: "course-v1:TesseraX+DL101+2026",
};

let home: string;
let ports: { SIGNON_PORT: string; COMPLETION_PORT: string; EDITORIAL_APP_PORT: string };
let run: StartRun;
let ready: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "tessera-pglite-era-"));
  // Run by root, the embedded PostgreSQL server runs as the account "postgres", which must be let through.
  await chmod(home, 0o711);
  await extractTarBr(fixture, home);
  const taken = new Set<number>();
  while (taken.size < 3) taken.add(await freePort());
  const [signon, completion, editorial] = [...taken].map(String) as [string, string, string];
  ports = { SIGNON_PORT: signon, COMPLETION_PORT: completion, EDITORIAL_APP_PORT: editorial };
  run = runStart(home, { ...ports });
  ready = await run.printed("Press Ctrl-C to stop.");
});
afterAll(async () => {
  // Stopped as an operator would (Ctrl-C stops the services, then the database server); killed only if that hangs.
  if (run.child.exitCode === null && run.child.signalCode === null) {
    process.kill(run.child.pid as number, "SIGTERM");
    const stopped = await Promise.race([run.exited.then(() => true), sleep(30_000).then(() => false)]);
    if (!stopped) process.kill(-(run.child.pid as number), "SIGKILL");
  }
  await run.exited;
  await removeDataFolder(home);
});

/** One query on the converted database, through the embedded server's socket in ./data. */
async function query<T extends Record<string, unknown>>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: `postgres://postgres@localhost:5432/tessera?host=${encodeURIComponent(join(home, "data"))}` });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

describe("npm start on a ./data written by the PGlite version", () => {
  it("converts it once, every table with the same row count, keeps the old folder renamed, and creates no new set-up", async () => {
    expect(ready).toMatch(
      /Converted the data of an earlier version to PostgreSQL: 32 tables, 384 rows, the same count in every table; the old folder is kept at .*\/data\/pglite-converted-\d{4}-\d{2}-\d{2}\./,
    );
    expect(ready).toContain(`Reusing the data in ${join(home, "data")}: the first start was done on 2026-11-26`);
    expect(ready).toContain(`(superadmin ${earlier.adminEmail})`);
    expect(ready).not.toContain("First start:");
    expect((await readdir(join(home, "data"))).filter((name) => name.startsWith("pglite"))).toEqual([expect.stringMatching(/^pglite-converted-/)]);
  });

  it("holds the rows the PGlite version wrote, with today's migrations applied on top", async () => {
    const counts = await query<{ users: number; applications: number; tokens: number; learners: number; completions: number }>(
      `SELECT (SELECT count(*)::int FROM signon.users) AS users, (SELECT count(*)::int FROM signon.applications) AS applications,
              (SELECT count(*)::int FROM signon.access_tokens) AS tokens, (SELECT count(*)::int FROM completion.learners) AS learners,
              (SELECT count(*)::int FROM completion.block_completions) AS completions`,
    );
    expect(counts).toEqual([{ users: 2, applications: 2, tokens: 1, learners: 4, completions: 123 }]);
    const applied = await query<{ n: number }>("SELECT count(*)::int AS n FROM drizzle.signon_migrations");
    // The 5 migrations of that time, copied, and those written since, applied by today's Sign-on at its start.
    expect(applied[0]?.n).toBeGreaterThan(5);
  });

  it("accepts the API token issued then: /user.json names its user, and Completion serves the demo course's completions with it", async () => {
    const user = await fetch(`http://127.0.0.1:${ports.SIGNON_PORT}/user.json`, { headers: { authorization: `Bearer ${earlier.token}` } });
    expect(user.status).toBe(200);
    expect(await user.json()).toMatchObject({ user: { name: "Demo API client", email: "demo-api-client@example.com", permissions: ["admin", "signin", "staff"] } });

    const course = await fetch(`http://127.0.0.1:${ports.COMPLETION_PORT}/api/completion/v1/course/${encodeURIComponent(earlier.courseKey)}/`, {
      headers: { authorization: `Bearer ${earlier.token}` },
    });
    expect(course.status).toBe(200);
    const body = JSON.stringify(await course.json());
    for (const learner of ["amara", "bruno", "chen", "dana"]) expect(body).toContain(learner);
  });

  it("signs the superadmin in with the password set then, on to setting up 2-step verification", async () => {
    const signon = `http://127.0.0.1:${ports.SIGNON_PORT}`;
    const form = await fetch(`${signon}/sign-in`);
    const cookies = form.headers.getSetCookie().map((cookie) => cookie.split(";")[0]).join("; ");
    const csrfToken = /name="_csrf" value="([^"]*)"/.exec(await form.text())?.[1] ?? "";
    const signedIn = await fetch(`${signon}/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: cookies, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrfToken, return_to: "/", email: earlier.adminEmail, password: earlier.password }),
    });
    await signedIn.arrayBuffer();
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toContain("two-step");
  });

  it("keeps the example application's registration: its client, with the callback registered then, reaches Sign-on's sign-in", async () => {
    const signIn = await fetch(`http://127.0.0.1:${ports.EDITORIAL_APP_PORT}/auth/gds`, { redirect: "manual" });
    const authorize = new URL(signIn.headers.get("location") ?? "");
    // That first start ran the example application on port 3102, and registered its callback there.
    authorize.searchParams.set("redirect_uri", "http://127.0.0.1:3102/auth/gds/callback");
    const answered = await fetch(authorize, { redirect: "manual" });
    await answered.arrayBuffer();
    // Sign-on knows the client and its callback: it asks the browser to sign in rather than answering 400.
    expect(answered.status).toBeGreaterThanOrEqual(300);
    expect(answered.status).toBeLessThan(400);
    expect(answered.headers.get("location")).toMatch(/\/sign-in/);
  });
});
