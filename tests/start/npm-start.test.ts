import { existsSync, readFileSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, removeDataFolder } from "@tessera/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answers, childrenOf, runShipped, runStart, startScript, whenEnded, type StartRun } from "@tessera/test-support";

const scratch = await mkdtemp(join(tmpdir(), "tessera-npm-start-"));
// Run by root, the embedded PostgreSQL server runs as the account "postgres", which must be let through.
await chmod(scratch, 0o711);
afterAll(() => removeDataFolder(scratch));

/** A working directory for one npm start, which the embedded server's account can enter. */
async function newHome(prefix: string): Promise<string> {
  const home = await mkdtemp(join(scratch, prefix));
  await chmod(home, 0o711);
  return home;
}

/** Tessera's version, which npm start prints with the addresses. */
const rootVersion = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** A stack trace line, which an operator's mistake must never print. */
const STACK_LINE = /^\s+at /m;

async function freePorts(): Promise<{ SIGNON_PORT: string; COMPLETION_PORT: string; EDITORIAL_APP_PORT: string }> {
  const ports = new Set<number>();
  while (ports.size < 3) ports.add(await freePort());
  const [signon, completion, editorial] = [...ports].map(String) as [string, string, string];
  return { SIGNON_PORT: signon, COMPLETION_PORT: completion, EDITORIAL_APP_PORT: editorial };
}

describe("npm start -- --help", () => {
  it("prints the settings and starts nothing, also run as `node scripts/start.mjs` (which runs itself again with npm start's options)", async () => {
    const run = runStart(scratch, {}, { args: ["--help"], withoutOptions: true });

    expect(await run.exited).toEqual({ code: 0, signal: null });
    const help = run.output();
    expect(help).toMatch(/^Usage: npm start/);
    for (const name of ["HOST", "SIGNON_PORT", "COMPLETION_PORT", "EDITORIAL_APP_PORT", "TESSERA_ADMIN_EMAIL", "TESSERA_LOG_FORMAT"]) expect(help).toContain(name);
    expect(existsSync(join(scratch, "data"))).toBe(false);
  });
});

describe("npm start with settings it cannot use", () => {
  it.each([
    ["PORT, which two services would read", { PORT: "3101" }, "PORT is set (3101), but Completion and the example application would both read it."],
    ["a port that is not a number", { SIGNON_PORT: "30o0" }, 'SIGNON_PORT must be a port number from 1 to 65535; got "30o0".'],
    ["one port for two services", { SIGNON_PORT: "3100", COMPLETION_PORT: "3100" }, "SIGNON_PORT, COMPLETION_PORT and EDITORIAL_APP_PORT must differ"],
    ["an unknown log format", { TESSERA_LOG_FORMAT: "xml" }, 'TESSERA_LOG_FORMAT must be pretty or json; got "xml".'],
  ])("refuses %s with exit code 2 and a plain message", async (_case, env, message) => {
    const refused = runStart(scratch, env);

    expect(await refused.exited).toEqual({ code: 2, signal: null });
    expect(refused.output()).toContain(`npm start: ${message}`);
    expect(refused.output()).not.toMatch(STACK_LINE);
  });

  it("refuses an argument it does not know, and shows the usage", async () => {
    const run = runStart(scratch, {}, { args: ["--port", "3100"] });

    expect(await run.exited).toEqual({ code: 2, signal: null });
    expect(run.output()).toContain("npm start: Unknown option '--port'");
    expect(run.output()).toContain("Usage: npm start");
  });
});

describe("npm start on ports of its own (first start)", () => {
  let home: string;
  let ports: Awaited<ReturnType<typeof freePorts>>;
  let run: StartRun;
  let ready: string;

  beforeAll(async () => {
    home = await newHome("first-");
    ports = await freePorts();
    run = runStart(home, { ...ports });
    ready = await run.printed("Press Ctrl-C to stop.");
  });
  afterAll(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) process.kill(-(run.child.pid as number), "SIGKILL");
    await run.exited;
  });

  it("listens on the ports it was given and prints their addresses", async () => {
    expect(ready).toContain(
      [
        "Tessera is running:",
        `  Sign-on      http://localhost:${ports.SIGNON_PORT} (sign in at this address: passkeys work only at the public URL)`,
        `  Completion   http://127.0.0.1:${ports.COMPLETION_PORT}/api/completion/v1/`,
        `  Editorial    http://127.0.0.1:${ports.EDITORIAL_APP_PORT} (example application)`,
        `  Version      ${rootVersion} (CHANGELOG.md)`,
      ].join("\n"),
    );
    expect(ready).toContain(`signs in at http://localhost:${ports.SIGNON_PORT}/sign-in`);
    expect(ready).toContain("sets up 2-step verification (an authenticator app) at the first sign-in");
    // It made the superadmin itself: Sign-on does not say, just before, how to make the first one.
    expect(ready).not.toContain("No accounts yet");
    for (const port of Object.values(ports)) expect(await answers(Number(port))).toBe(true);
    // Every address it prints answers.
    const printed = [...ready.slice(ready.indexOf("Tessera is running:")).matchAll(/ {2}\S+ +(http:\/\/\S+)/g)].map((match) => match[1] as string);
    expect(printed).toHaveLength(3);
    for (const address of printed) expect((await fetch(address.replace("localhost", "127.0.0.1"))).status, address).toBe(200);
  });

  it("gave the first start the URLs of those ports: the example application's sign-in reaches Sign-on's form", async () => {
    const signIn = await fetch(`http://127.0.0.1:${ports.EDITORIAL_APP_PORT}/auth/gds`, { redirect: "manual" });
    const authorize = new URL(signIn.headers.get("location") ?? "");
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`http://localhost:${ports.SIGNON_PORT}/oauth/authorize`);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${ports.EDITORIAL_APP_PORT}/auth/gds/callback`);

    // Sign-on knows that callback: it asks the browser to sign in rather than answering 400.
    const answered = await fetch(authorize, { redirect: "manual" });
    await answered.arrayBuffer();
    expect(answered.status).toBeGreaterThanOrEqual(300);
    expect(answered.status).toBeLessThan(400);
  });

  it("keeps the demo API token to the application it was issued to: Completion takes it, the example application refuses it", async () => {
    const token = /API token +([0-9a-f]+)/.exec(ready)?.[1];
    expect(token).toBeDefined();
    const headers = { authorization: `Bearer ${token}` };

    const atCompletion = await fetch(`http://127.0.0.1:${ports.COMPLETION_PORT}/api/completion/v1/course/course-v1:TesseraX+DL101+2026/?username=amara`, { headers });
    const atExample = await fetch(`http://127.0.0.1:${ports.EDITORIAL_APP_PORT}/api/me`, { headers });

    expect(atCompletion.status).toBe(200);
    expect(atExample.status).toBe(401);
    expect(await atExample.json()).toMatchObject({ error: "invalid_token" });
  });

  it("queued no pushes: a fresh install shows no failed ones", async () => {
    const listed = await runShipped("signon-cli", ["pushes", "list", "--json"], { DATABASE_URL: "", SIGNON_DATA_DIR: join(home, "data") });

    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ pushes: [] });
  });

  it("writes the services' logs as one JSON object per line, naming the service, when its output is not a terminal", () => {
    const lines = run.output().split("\n");
    const logLines = lines.filter((line) => line.startsWith("{"));
    const services = new Set(logLines.map((line) => (JSON.parse(line) as { service: string }).service));

    expect(services).toEqual(new Set(["database", "signon", "completion", "editorial"]));
    // What a service printed as text is a JSON line too: no line is marked with a service's name instead.
    expect(lines.filter((line) => /^(database|signon|completion|editorial)\s*\| /.test(line))).toEqual([]);
    expect(logLines.filter((line) => line.includes('"msg":"database: applied'))).not.toEqual([]);
    expect(logLines.filter((line) => line.includes('"msg":"Server listening at'))).toHaveLength(3);
  });

  it("refuses a second npm start in the same directory plainly, with exit code 1", async () => {
    const second = runStart(home, { ...ports });

    expect(await second.exited).toEqual({ code: 1, signal: null });
    expect(second.output()).toBe(
      `npm start is already running in ${home} (process ${run.child.pid}, Sign-on at http://localhost:${ports.SIGNON_PORT}).\n` +
        "Use that one, or stop it first (Ctrl-C in its terminal).\n",
    );
  });

  it("refuses a second npm start elsewhere on the same ports plainly, with exit code 1", async () => {
    const elsewhere = await newHome("elsewhere-");
    const second = runStart(elsewhere, { ...ports });

    expect(await second.exited).toEqual({ code: 1, signal: null });
    const output = second.output();
    expect(output).toContain(`npm start: port ${ports.SIGNON_PORT} on 127.0.0.1, for Sign-on (SIGNON_PORT), is in use`);
    expect(output).toContain(`npm start: port ${ports.EDITORIAL_APP_PORT} on 127.0.0.1, for the example application (EDITORIAL_APP_PORT), is in use`);
    expect(output).not.toContain("Tessera is running");
    expect(output).not.toMatch(STACK_LINE);
    expect(existsSync(join(elsewhere, "data", "npm-start.lock"))).toBe(false);
  });

  it("leaves nothing running when its process group is killed with SIGKILL: the database server stops cleanly after the services", async () => {
    // Sign-on, Completion (the example application runs inside npm start), the PostgreSQL server and its guard.
    const children = childrenOf(run.child.pid as number);
    expect(children).toHaveLength(4);

    process.kill(-(run.child.pid as number), "SIGKILL");
    await run.exited;

    expect(await whenEnded(children)).toEqual([]);
    for (const port of Object.values(ports)) expect(await answers(Number(port))).toBe(false);
    expect(existsSync(join(home, "data", "postgres", "postmaster.pid"))).toBe(false);
    expect(await readFile(join(home, "data", "postgres.log"), "utf8")).toMatch(/database system is shut down\n$/);
  });

  describe("a later start, on a terminal", () => {
    let later: StartRun;
    let startPid: number;
    let services: number[];

    beforeAll(async () => {
      later = runStart(home, { ...ports }, { terminal: true });
      await later.printed("Press Ctrl-C to stop.");
      startPid = (JSON.parse(readFileSync(join(home, "data", "npm-start.lock"), "utf8")) as { pid: number }).pid;
      services = childrenOf(startPid);
    });
    afterAll(async () => {
      if (later.child.exitCode === null && later.child.signalCode === null) process.kill(-(later.child.pid as number), "SIGKILL");
      await later.exited;
    });

    it("takes over the lock that the killed one left, and reuses the data", () => {
      expect(later.output()).toContain(`Reusing the data in ${join(home, "data")}`);
      expect(later.output()).not.toContain("First start:");
    });

    it("writes readable log lines, not JSON", () => {
      const listening = later
        .output()
        // The level and message are coloured on a terminal.
        .replace(/\x1b\[\d+m/g, "") // eslint-disable-line no-control-regex -- ANSI colour codes start with ESC
        .split("\n")
        .filter((line) => line.includes("Server listening at"));

      expect(listening).toHaveLength(3);
      for (const line of listening) expect(line).toMatch(/^(signon|completion|editorial) +\| \[\d\d:\d\d:\d\d\.\d{3}\] INFO: Server listening at http:\/\/127\.0\.0\.1:\d+$/);
    });

    it("stops every service on SIGHUP (its terminal closed), the example application first, then the database server, and exits 0", async () => {
      expect(services).toHaveLength(4);

      process.kill(startPid, "SIGHUP");

      expect(await later.exited).toEqual({ code: 0, signal: null });
      expect(await whenEnded(services, 5_000)).toEqual([]);
      for (const port of Object.values(ports)) expect(await answers(Number(port))).toBe(false);
      const closing = later
        .output()
        .split("\n")
        .filter((line) => / (SIGTERM: closing|npm start is stopping: closing)$/.test(line.replace(/\x1b\[\d+m/g, ""))) // eslint-disable-line no-control-regex -- ANSI colour codes start with ESC
        .map((line) => line.split(" ")[0]);
      expect(closing).toEqual(["editorial", "completion", "signon"]);
      expect(existsSync(join(home, "data", "npm-start.lock"))).toBe(false);
      // A fast, clean shutdown: the next start needs no recovery.
      const log = await readFile(join(home, "data", "postgres.log"), "utf8");
      expect(log).toMatch(/database system is shut down\n$/);
      expect(log.slice(log.lastIndexOf("starting PostgreSQL"))).not.toContain("was interrupted");
    });
  });
});

describe("npm start killed with SIGKILL, the database server with it", () => {
  it("loses nothing acknowledged: the next start recovers the database and finds what the API took", async () => {
    const home = await newHome("crash-");
    const ports = await freePorts();
    const first = runStart(home, { ...ports });
    let again: StartRun | undefined;
    try {
      const printed = await first.printed("Press Ctrl-C to stop.");
      const token = /API token +([0-9a-f]+)/.exec(printed)?.[1];
      const imported = await fetch(`http://127.0.0.1:${ports.COMPLETION_PORT}/api/completion/v1/admin/import`, {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          users: [{ id: 990_001, username: "kept-through-the-crash", email: "kept@example.com", uid: null }],
          enrollments: [{ username: "kept-through-the-crash", course_key: "course-v1:TesseraX+DL101+2026", is_active: true, mode: "audit" }],
          roles: [],
          cohorts: [],
          completions: [],
        }),
      });
      expect(imported.status).toBe(200);
      await imported.arrayBuffer();

      // Everything at once, as a machine's power cut would: npm start's group and the database server's.
      const children = childrenOf(first.child.pid as number);
      const guard = children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("tessera-database-guard"));
      expect(guard).toBeDefined();
      const postmaster = Number(readFileSync(join(home, "data", "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
      // The server's processes are a group of their own, and so is its guard.
      process.kill(-(guard as number), "SIGKILL");
      process.kill(-(first.child.pid as number), "SIGKILL");
      process.kill(-postmaster, "SIGKILL");
      await first.exited;
      expect(await whenEnded([...children, postmaster])).toEqual([]);

      again = runStart(home, { ...ports });
      await again.printed("Press Ctrl-C to stop.");
      const log = await readFile(join(home, "data", "postgres.log"), "utf8");
      expect(log).toContain("database system was interrupted");
      const client = new pg.Client({ connectionString: `postgres://postgres@localhost:5432/tessera?host=${encodeURIComponent(join(home, "data"))}` });
      await client.connect();
      try {
        const { rows } = await client.query("SELECT username FROM completion.learners WHERE username = 'kept-through-the-crash'");
        expect(rows).toEqual([{ username: "kept-through-the-crash" }]);
      } finally {
        await client.end();
      }
      again.child.kill("SIGTERM");
      expect(await again.exited).toEqual({ code: 0, signal: null });
    } finally {
      for (const run of [first, again]) {
        if (run && run.child.exitCode === null && run.child.signalCode === null) process.kill(-(run.child.pid as number), "SIGKILL");
      }
    }
  });
});

describe("npm start on a data directory it cannot use", () => {
  it("says in one sentence that ./data belongs to another account, with the way out, and exits 1", async () => {
    const home = await newHome("foreign-");
    await mkdir(join(home, "data"), { mode: 0o700 });
    // An account that is neither this one nor the one PostgreSQL runs as.
    await chown(join(home, "data"), 4242, 4242);
    const run = runStart(home, { ...(await freePorts()) });

    expect(await run.exited).toEqual({ code: 1, signal: null });
    const output = run.output();
    expect(output).toMatch(/belongs to another account/);
    expect(output).toMatch(/set DATABASE_URL to a PostgreSQL server|start Tessera as its owner/);
    expect(output).not.toContain("Tessera is running");
    expect(output).not.toMatch(STACK_LINE);
  });
});

describe("npm start when npm ends on its own", () => {
  it("stops every service, in order, and gives up the data directory", async () => {
    const home = await newHome("under-npm-");
    const ports = await freePorts();
    const run = runStart(home, { ...ports }, { underNpm: true });
    try {
      await run.printed("Press Ctrl-C to stop.");
      const [startPid] = childrenOf(run.child.pid as number);
      const services = childrenOf(startPid as number);
      expect(services).toHaveLength(4);

      process.kill(run.child.pid as number, "SIGKILL");

      expect(await whenEnded([startPid as number, ...services])).toEqual([]);
      for (const port of Object.values(ports)) expect(await answers(Number(port))).toBe(false);
      expect(run.output()).toContain("npm has ended: stopping the services");
      const closing = run
        .output()
        .split("\n")
        .filter((line) => /"msg":"(SIGTERM|npm start is stopping): closing"/.test(line))
        .map((line) => (JSON.parse(line) as { service: string }).service);
      expect(closing).toEqual(["editorial", "completion", "signon"]);
      expect(existsSync(join(home, "data", "npm-start.lock"))).toBe(false);
    } finally {
      for (const pid of [run.child.pid as number, ...childrenOf(run.child.pid as number)]) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // gone already
        }
      }
    }
  });
});

describe("the start script", () => {
  it("is what `npm start` runs", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };
    expect(manifest.scripts["start"]).toBe("exec node --conditions=tessera-built --max-semi-space-size=2 scripts/start.mjs");
    expect(startScript.endsWith("scripts/start.mjs")).toBe(true);
  });
});
