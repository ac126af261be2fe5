import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { freePort, removeDataFolder } from "@tessera/db/testing";
import { parseLsn } from "@tessera/db";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot, runShipped, runStart, type StartRun } from "@tessera/test-support";
import { setUpTwoStep, signInWithCode, type Authenticator } from "./support/two-step.js";

const scratch = await mkdtemp(join(tmpdir(), "tessera-backup-"));
// Run by root, the embedded PostgreSQL server runs as the account "postgres", which must be let through.
await chmod(scratch, 0o711);
afterAll(() => removeDataFolder(scratch));

async function newHome(prefix: string): Promise<string> {
  const home = await mkdtemp(join(scratch, prefix));
  await chmod(home, 0o711);
  return home;
}

async function freePorts(): Promise<{ SIGNON_PORT: string; COMPLETION_PORT: string; EDITORIAL_APP_PORT: string }> {
  const ports = new Set<number>();
  while (ports.size < 3) ports.add(await freePort());
  const [signon, completion, editorial] = [...ports].map(String) as [string, string, string];
  return { SIGNON_PORT: signon, COMPLETION_PORT: completion, EDITORIAL_APP_PORT: editorial };
}

/** Runs `scripts/<script>` as `npm run <script>` does, but in `home` (its ./data), to its end. */
function runScript(script: "backup" | "restore", home: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(repositoryRoot, "scripts", `${script}.mjs`), ...args], { cwd: home, env: { ...process.env, DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

/** A client of the installation's database, as its superuser, through the socket in `home`/data. */
async function connect(home: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: `postgres://postgres@localhost:5432/tessera?host=${encodeURIComponent(join(home, "data"))}` });
  await client.connect();
  return client;
}

function stopped(run: StartRun | undefined): Promise<unknown> {
  if (run !== undefined && run.child.exitCode === null && run.child.signalCode === null) process.kill(-(run.child.pid as number), "SIGKILL");
  return run?.exited ?? Promise.resolve();
}

/** One write of the loop that runs during the backup: its number, and where the WAL was while it ran (before its commit). */
interface Write {
  n: number;
  lsn: bigint;
  acknowledgedAt: number;
}

describe("npm run backup while npm start runs, and npm run restore into a stopped installation", () => {
  let home: string;
  let ports: Awaited<ReturnType<typeof freePorts>>;
  let first: StartRun;
  let password: string;
  let token: string;
  let authenticator: Authenticator;
  let backup: { file: string; startedAt: number; output: string; writes: Write[] };
  let restoredHome: string;
  let again: StartRun | undefined;

  beforeAll(async () => {
    home = await newHome("installation-");
    ports = await freePorts();
    first = runStart(home, { ...ports });
    const printed = await first.printed("Press Ctrl-C to stop.");
    password = /Password +(\S+)/.exec(printed)?.[1] ?? "";
    token = /API token +([0-9a-f]+)/.exec(printed)?.[1] ?? "";
  });
  afterAll(async () => {
    await stopped(first);
    await stopped(again);
  });

  it("backs up the running installation while writes go on, into one file of mode 0600", async () => {
    // What the backup must carry besides rows: a person made with the command line, and the superadmin's 2-step key,
    // sealed with ./data/secret-key.
    const made = await runShipped("signon-cli", ["users", "create", "--email", "kept@example.org", "--name", "Kept Through The Backup", "--generate-password"], {
      DATABASE_URL: "",
      SIGNON_DATA_DIR: join(home, "data"),
    });
    expect(made.code, made.output).toBe(0);
    authenticator = await setUpTwoStep(`http://127.0.0.1:${ports.SIGNON_PORT}`, "admin@example.com", password);

    const client = await connect(home);
    try {
      await client.query("CREATE TABLE public.backup_writes (n integer PRIMARY KEY, payload text NOT NULL)");
      const writes: Write[] = [];
      let writing = true;
      // One write after the other, each acknowledged (committed) before the next: 8 kB of text that does not compress;
      // every 50 writes the server moves on to a new WAL segment, so that the backup needs several.
      const loop = (async () => {
        for (let n = 1; writing; n++) {
          if (n % 50 === 0) await client.query("SELECT pg_switch_wal()");
          const { rows } = await client.query<{ lsn: string }>(
            "INSERT INTO public.backup_writes (n, payload) SELECT $1, string_agg(md5(random()::text || g), '') FROM generate_series(1, 256) g RETURNING pg_current_wal_insert_lsn()::text AS lsn",
            [n],
          );
          writes.push({ n, lsn: parseLsn((rows[0] as { lsn: string }).lsn), acknowledgedAt: Date.now() });
        }
      })();
      while (writes.length < 50) await new Promise((resolve) => setTimeout(resolve, 20));

      const file = join(home, "backups", "during-writes.tar.gz");
      const startedAt = Date.now();
      const taken = await runScript("backup", home, [file]);
      writing = false;
      await loop;

      expect(taken.code, taken.output).toBe(0);
      expect(taken.output).toMatch(new RegExp(`^Wrote ${file} \\(\\d+\\.\\d MB, \\d+ files\\) in \\d+\\.\\d s:$`, "m"));
      expect(taken.output).toContain("and editorial-app.json, postgres-password, secret-key from");
      expect(Number(/, (\d+) WAL segment\(s\)\)/.exec(taken.output)?.[1])).toBeGreaterThan(1);
      expect(taken.output).not.toContain("was not running");
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      // Nothing left beside it: neither the folder it was assembled in nor a partial file.
      expect(await readdir(join(home, "backups"))).toEqual(["during-writes.tar.gz"]);
      expect(writes.filter((write) => write.acknowledgedAt > startedAt).length).toBeGreaterThan(0);
      backup = { file, startedAt, output: taken.output, writes };
    } finally {
      await client.end();
    }
  });

  it("refuses to restore while npm start runs in that directory, and changes nothing", async () => {
    const refused = await runScript("restore", home, [backup.file, "--force"]);

    expect(refused.code).toBe(1);
    expect(refused.output).toBe(`npm run restore: npm start is running in ${home} (process ${first.child.pid}): stop it first (Ctrl-C in its terminal), then restore.\n`);
    expect((await readdir(home)).sort()).toEqual(["backups", "data"]);
  });

  it("refuses an archive with one byte changed, before it touches anything", async () => {
    const damaged = join(scratch, "damaged.tar.gz");
    const bytes = await readFile(backup.file);
    const at = Math.floor(bytes.length / 2);
    bytes[at] = (bytes[at] as number) ^ 0x01;
    await writeFile(damaged, bytes);
    const target = await newHome("damaged-");

    const refused = await runScript("restore", target, [damaged]);

    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(new RegExp(`^npm run restore: ${damaged} is damaged: .+; nothing was changed\\.\\n$`));
    expect(await readdir(target)).toEqual([]);
  });

  it("refuses an archive whose compression is whole but one file's content changed: the manifest's SHA-256 finds it", async () => {
    const tar = gunzipSync(await readFile(backup.file));
    // A tar entry is a 512-byte header (its name first) followed by the file's content.
    let header = 0;
    while (header < tar.length && tar.toString("utf8", header, header + 100).replace(/\0.*$/s, "") !== "data/secret-key") header += 512;
    expect(header).toBeLessThan(tar.length);
    const at = header + 512;
    tar[at] = tar[at] === 0x30 ? 0x31 : 0x30;
    const tampered = join(scratch, "tampered.tar.gz");
    await writeFile(tampered, gzipSync(tar, { level: 1 }));
    const target = await newHome("tampered-");

    const refused = await runScript("restore", target, [tampered]);

    expect(refused.code).toBe(1);
    expect(refused.output).toBe(`npm run restore: ${tampered} is damaged: data/secret-key does not match its SHA-256 in the manifest; nothing was changed.\n`);
    expect(await readdir(target)).toEqual([]);
  });

  it("backs up a stopped installation by starting its database server for the backup, and stopping it again", async () => {
    first.child.kill("SIGTERM");
    expect(await first.exited).toEqual({ code: 0, signal: null });

    const taken = await runScript("backup", home, []);

    expect(taken.code, taken.output).toBe(0);
    expect(taken.output).toContain("The database server was not running: it was started for the backup and stopped again.");
    expect(existsSync(join(home, "data", "postgres", "postmaster.pid"))).toBe(false);
    const written = /^Wrote (\S+) /.exec(taken.output)?.[1] ?? "";
    expect(written).toMatch(new RegExp(`^${join(home, "backups")}/tessera-\\d{8}T\\d{6}Z\\.tar\\.gz$`));
    const verified = await runScript("restore", home, [written, "--verify"]);
    expect(verified.code, verified.output).toBe(0);
    expect(verified.output).toMatch(new RegExp(`^${written} is whole: its \\d+ files match their SHA-256 in its manifest`));
    expect((await readdir(home)).sort()).toEqual(["backups", "data"]);
  });

  it("refuses to restore over an existing ./data without --force; with it, moves that one aside", async () => {
    const secretKey = await readFile(join(home, "data", "secret-key"), "utf8");

    const refused = await runScript("restore", home, [backup.file]);
    expect(refused.code).toBe(1);
    expect(refused.output).toBe(
      `npm run restore: ${join(home, "data")} holds an installation already: to move it aside (to ${join(home, "data")}.before-restore-<time>) and restore in its place, run again with --force.\n`,
    );
    expect((await readdir(home)).sort()).toEqual(["backups", "data"]);

    const forced = await runScript("restore", home, [backup.file, "--force"]);
    expect(forced.code, forced.output).toBe(0);
    const aside = (await readdir(home)).find((name) => name.startsWith("data.before-restore-"));
    expect(aside).toMatch(/^data\.before-restore-\d{8}T\d{6}Z$/);
    expect(forced.output).toContain(`The data that was there is in ${join(home, aside as string)}.`);
    expect(await readFile(join(home, aside as string, "secret-key"), "utf8")).toBe(secretKey);
    expect(existsSync(join(home, aside as string, "postgres", "PG_VERSION"))).toBe(true);
  });

  describe("restored into a new directory", () => {
    let startedAgain: string;

    beforeAll(async () => {
      restoredHome = await newHome("restored-");
      const restored = await runScript("restore", restoredHome, [backup.file]);
      expect(restored.code, restored.output).toBe(0);
      expect(restored.output).toContain(`Restored ${backup.file} into ${join(restoredHome, "data")} in `);
      expect(restored.output).toContain("The next npm start recovers the database from the backup's WAL and runs.");
      again = runStart(restoredHome, { ...ports });
      startedAgain = await again.printed("Press Ctrl-C to stop.");
    });

    it("starts from the backup: PostgreSQL recovers from its backup_label and WAL, and the first start is not made again", async () => {
      expect(startedAgain).toContain(`Reusing the data in ${join(restoredHome, "data")}`);
      expect(startedAgain).not.toContain("First start:");
      const log = await readFile(join(restoredHome, "data", "postgres.log"), "utf8");
      expect(log).toMatch(/starting backup recovery with redo LSN/);
      expect(log).toMatch(/completed backup recovery with redo LSN/);
      for (const port of Object.values(ports)) expect((await fetch(`http://127.0.0.1:${port}/healthcheck/live`)).status).toBe(200);
      for (const port of [ports.SIGNON_PORT, ports.COMPLETION_PORT]) expect((await fetch(`http://127.0.0.1:${port}/healthcheck/ready`)).status).toBe(200);
    });

    it("holds every write acknowledged before the backup started, and those the WAL up to its stop holds, in order with no gap", async () => {
      const stopLsn = parseLsn(/WAL (\S+) \(an online base backup/.exec(backup.output)?.[1] ?? "");
      const client = await connect(restoredHome);
      try {
        const { rows } = await client.query<{ n: number }>("SELECT n FROM public.backup_writes ORDER BY n");
        const restored = rows.map((row) => row.n);
        const beforeStart = backup.writes.filter((write) => write.acknowledgedAt <= backup.startedAt).length;
        // Write n committed before write n + 1 began: when n + 1 began before the backup's stop, n is in the WAL it copied.
        const inWal = backup.writes.filter((_, index) => {
          const next = backup.writes[index + 1];
          return next !== undefined && next.lsn <= stopLsn;
        }).length;

        expect(restored).toEqual(Array.from({ length: restored.length }, (_, index) => index + 1));
        expect(restored.length).toBeGreaterThanOrEqual(beforeStart);
        expect(restored.length).toBeGreaterThanOrEqual(inWal);
        // Some of those were written while the files were copied: the WAL brought them.
        expect(inWal).toBeGreaterThan(beforeStart);
        expect(restored.length).toBeLessThanOrEqual(backup.writes.length + 1);

        const kept = await client.query("SELECT name FROM signon.users WHERE email = 'kept@example.org'");
        expect(kept.rows).toEqual([{ name: "Kept Through The Backup" }]);
      } finally {
        await client.end();
      }
    });

    it("signs the superadmin in with the password and a 2-step code: the secret key came along", async () => {
      const signedIn = await signInWithCode(`http://127.0.0.1:${ports.SIGNON_PORT}`, "admin@example.com", password, authenticator);

      expect(signedIn.code).toEqual({ status: 303, location: "/" });
      expect(signedIn.page).toBe(200);
    });

    it("takes the demo API token at Completion, and the example application still has its credentials", async () => {
      const course = await fetch(`http://127.0.0.1:${ports.COMPLETION_PORT}/api/completion/v1/course/course-v1:TesseraX+DL101+2026/?username=amara`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(course.status).toBe(200);
      await course.arrayBuffer();

      const signIn = await fetch(`http://127.0.0.1:${ports.EDITORIAL_APP_PORT}/auth/gds`, { redirect: "manual" });
      const authorize = await fetch(signIn.headers.get("location") ?? "", { redirect: "manual" });
      await authorize.arrayBuffer();
      expect(authorize.headers.get("location")).toMatch(/\/sign-in/);
    });

    it("stops cleanly", async () => {
      again?.child.kill("SIGTERM");
      expect(await again?.exited).toEqual({ code: 0, signal: null });
    });
  });
});

describe("npm run backup and npm run restore", () => {
  it("are what the package's scripts run", () => {
    const manifest = JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(manifest.scripts["backup"]).toBe("node scripts/backup.mjs");
    expect(manifest.scripts["restore"]).toBe("node scripts/restore.mjs");
  });

  it("refuse a directory with no installation, and a missing file, in one sentence", async () => {
    const empty = await newHome("empty-");

    const backedUp = await runScript("backup", empty, []);
    expect(backedUp.code).toBe(1);
    expect(backedUp.output).toBe(`npm run backup: ${join(empty, "data")} holds no embedded database (npm start makes it at its first start): there is nothing to back up.\n`);

    const restored = await runScript("restore", empty, ["no-such.tar.gz"]);
    expect(restored.code).toBe(1);
    expect(restored.output).toBe(`npm run restore: there is no backup file at ${join(empty, "no-such.tar.gz")}.\n`);
    expect(await readdir(empty)).toEqual([]);
  });
});
