import { mkdtemp, mkdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { checkNewPassword } from "../../src/accounts/password-policy.js";
import { runFirstStart } from "../../src/bootstrap/first-start.js";
import { FIRST_START_KEY } from "../../src/bootstrap/marker.js";
import { applications, auditEvents, pushDeliveries, settings, users } from "../../src/db/schema.js";
import { InjectBrowser } from "../support/browser.js";
import { runSignonCli } from "../support/cli.js";
import { getUserJson } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const scratch = await mkdtemp(join(tmpdir(), "signon-first-start-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));
let credentialsFile: string;
beforeEach(async () => {
  credentialsFile = join(await mkdtemp(join(scratch, "data-")), "editorial-app.json");
});

const signonCli = (...argv: string[]) => runSignonCli(database.url, argv);

async function countRows() {
  return { users: (await database.db.select().from(users)).length, applications: (await database.db.select().from(applications)).length };
}

describe("signon bootstrap first-start", () => {
  it("creates the superadmin, both applications, the demo API client and the credentials file, and prints the secrets once", async () => {
    const result = await signonCli("bootstrap", "first-start", "--credentials-file", credentialsFile, "--json");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const output = JSON.parse(result.stdout);
    expect(output).toEqual({
      status: "created",
      admin: { email: "admin@example.com", uid: expect.stringMatching(/^[0-9a-f-]{36}$/), password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) },
      completion_app: { name: "completion", client_id: expect.stringMatching(/^[0-9a-f]{64}$/) },
      example_app: { name: "Editorial app", client_id: expect.stringMatching(/^[0-9a-f]{64}$/), credentials_file: credentialsFile },
      api_client: {
        name: "Demo API client",
        email: "demo-api-client@example.com",
        uid: expect.any(String),
        access_token: expect.stringMatching(/^[0-9a-f]{64}$/),
        expires_at: expect.any(String),
      },
    });

    // Secrets are kept hashed, never as given.
    const [admin] = await database.db.select().from(users).where(eq(users.email, "admin@example.com"));
    expect(admin).toMatchObject({ role: "superadmin", isApiUser: false });
    expect(admin?.passwordHash).toMatch(/^\$argon2id\$/);
    expect(admin?.passwordHash).not.toContain(output.admin.password);

    // The credentials file is the owner's only and holds what the example application reads.
    expect((await stat(credentialsFile)).mode & 0o777).toBe(0o600);
    const credentials = JSON.parse(await readFile(credentialsFile, "utf8"));
    expect(credentials).toEqual({
      name: "Editorial app",
      client_id: output.example_app.client_id,
      client_secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      redirect_uris: ["http://127.0.0.1:3002/auth/gds/callback"],
      permissions: ["admin", "editor", "signin"],
    });
    const [example] = await database.db.select().from(applications).where(eq(applications.name, "Editorial app"));
    expect(example).toMatchObject({ homeUri: "http://127.0.0.1:3002/", pushBaseUrl: "http://127.0.0.1:3002/auth/gds/api" });
    expect(example?.clientSecretHash).not.toBe(credentials.client_secret);

    // The token answers at /user.json with the permissions Completion checks.
    const userJson = await getUserJson(signon.app, output.api_client.access_token);
    expect(userJson.statusCode).toBe(200);
    expect(userJson.json()).toMatchObject({ user: { email: "demo-api-client@example.com", permissions: ["admin", "signin", "staff"] } });

    // The random password passes the policy any chosen password must.
    expect(await checkNewPassword(signon.ctx, { email: "admin@example.com", name: "Administrator" }, output.admin.password)).toEqual({});

    // The printed password signs the superadmin in through the real form.
    const browser = new InjectBrowser(signon.app);
    const signedIn = await browser.signIn("/sign-in", "admin@example.com", output.admin.password);
    expect(signedIn.statusCode).toBe(303);
    expect(browser.cookie("signon_session")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("registers completion with the push address of its receivers, and queues no pushes", async () => {
    await signonCli("bootstrap", "first-start", "--credentials-file", credentialsFile, "--completion-url", "http://127.0.0.1:3101/");

    const [completion] = await database.db.select().from(applications).where(eq(applications.name, "completion"));
    expect(completion).toMatchObject({
      redirectUris: ["http://127.0.0.1:3101/"],
      homeUri: "http://127.0.0.1:3101/api/completion/v1/openapi.json",
      pushBaseUrl: "http://127.0.0.1:3101/auth/gds/api",
    });
    expect(await database.db.select().from(pushDeliveries)).toEqual([]);
    // The grants are audited all the same.
    const grants = (await database.db.select().from(auditEvents)).filter((event) => event.action === "permissions_granted");
    expect(grants).toHaveLength(3);
  });

  it("grants the superadmin signin and admin on both applications", async () => {
    await signonCli("bootstrap", "first-start", "--credentials-file", credentialsFile);
    for (const app of ["completion", "Editorial app"]) {
      const granted = await signonCli("permissions", "grant", "--email", "admin@example.com", "--app", app, "--permissions", "signin", "--json");
      expect(JSON.parse(granted.stdout).permissions).toEqual(["admin", "signin"]);
    }
  });

  it("does nothing on a second run: no new rows, the credentials file untouched, no secret printed", async () => {
    const first = await signonCli("bootstrap", "first-start", "--credentials-file", credentialsFile, "--json");
    expect(first.code).toBe(0);
    const before = await countRows();
    const fileBefore = await readFile(credentialsFile, "utf8");

    const second = await signonCli("bootstrap", "first-start", "--credentials-file", credentialsFile, "--admin-email", "other@example.com", "--json");
    expect(second).toMatchObject({ code: 0, stderr: "" });
    // The completion application's client id, which Completion checks tokens as, is no secret: it is said again.
    expect(JSON.parse(second.stdout)).toEqual({
      status: "done-before",
      completed_at: expect.any(String),
      admin_email: "admin@example.com",
      completion_app: { client_id: JSON.parse(first.stdout).completion_app.client_id },
    });
    expect(second.stdout).not.toContain(JSON.parse(first.stdout).admin.password);
    expect(await countRows()).toEqual(before);
    expect(await readFile(credentialsFile, "utf8")).toBe(fileBefore);

    const text = await signonCli("bootstrap", "first-start", "--credentials-file", credentialsFile);
    expect(text.stdout).toMatch(/^First start already done \(.+, administrator admin@example\.com\); nothing changed\.\n$/);
  });

  it("runs once when two runs race", async () => {
    const [a, b] = await Promise.all([
      runFirstStart(signon.ctx, { credentialsFile }),
      runFirstStart(signon.ctx, { credentialsFile: `${credentialsFile}.2` }),
    ]);
    expect([a.status, b.status].sort()).toEqual(["created", "done-before"]);
    expect(await countRows()).toEqual({ users: 2, applications: 2 });
  });

  it("keeps nothing when a step fails, so the next run starts afresh", async () => {
    // A directory where the credentials file should go: writing it fails after everything else was created.
    await mkdir(credentialsFile);
    await expect(runFirstStart(signon.ctx, { credentialsFile, adminEmail: "root@example.org" })).rejects.toThrow();
    expect(await countRows()).toEqual({ users: 0, applications: 0 });
    expect(await database.db.select().from(settings).where(eq(settings.key, FIRST_START_KEY))).toEqual([]);

    const retry = await runFirstStart(signon.ctx, { credentialsFile: `${credentialsFile}.json`, adminEmail: "root@example.org" });
    expect(retry).toMatchObject({ status: "created", admin: { email: "root@example.org" } });
  });

  it("refuses a bad administrator address with exit code 1 and keeps nothing", async () => {
    const result = await signonCli("bootstrap", "first-start", "--credentials-file", credentialsFile, "--admin-email", "not-an-address");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^signon: /);
    expect(await countRows()).toEqual({ users: 0, applications: 0 });
  });
});
