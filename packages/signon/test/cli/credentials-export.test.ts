import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq, inArray } from "drizzle-orm";
import { parseAllDocuments, parseDocument } from "yaml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { applications, auditEvents } from "../../src/db/schema.js";
import { runBuiltSignonCli } from "../support/built-cli.js";
import { runSignonCli } from "../support/cli.js";
import { createApp, createUser } from "../support/factories.js";
import { exchangeCode, getUserJson, obtainCode, type TestClient } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon: system } = await useTestSignon();
const { app, ctx } = system;
const signon = (...argv: string[]) => runBuiltSignonCli(database.url, argv);
// The many refusals run the same command in this process, where each takes milliseconds rather than a second.
const signonHere = (...argv: string[]) => runSignonCli(database.url, argv, { SIGNON_SECRET_KEY: "5e".repeat(32) });

let scratch: string;
beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "signon-export-"));
});
afterEach(() => rm(scratch, { recursive: true, force: true }));

/** Publisher, a person who may sign in to it, and an API user holding signin on it and on Search. */
async function setUp() {
  const publisher = await createApp(ctx, { name: "Publisher", redirectUris: ["https://publisher.example.org/auth/gds/callback"] });
  const search = await createApp(ctx, { name: "Search", redirectUris: ["https://search.example.org/auth/gds/callback"] });
  const person = await createUser(ctx, { permissions: { Publisher: ["signin"] } });
  const robot = await createApiUser(ctx, { email: "robot@example.org", name: "Indexing robot" });
  await grantPermissions(ctx, { email: robot.email, application: "Publisher", permissions: ["signin"] });
  await grantPermissions(ctx, { email: robot.email, application: "Search", permissions: ["signin"] });
  return { publisher, search, person, robot };
}

const exportEvents = () => database.db.select().from(auditEvents).where(eq(auditEvents.action, "credentials_exported")).orderBy(asc(auditEvents.id));

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

/** A manifest's fields with its `data` decoded. */
function readManifest(text: string) {
  const document = parseDocument(text);
  expect(document.errors).toEqual([]);
  const manifest = document.toJS() as { data: Record<string, string>; metadata: { annotations: Record<string, string> } };
  const decoded = Object.fromEntries(Object.entries(manifest.data).map(([key, value]) => [key, Buffer.from(value, "base64").toString("utf8")]));
  return { manifest, decoded };
}

describe("signon credentials export", () => {
  it("writes one Secret manifest per secret, mode 0600, in a new 0700 directory; the exported client secret works at /token and the token at /user.json", async () => {
    const { publisher, person, robot } = await setUp();
    const out = join(scratch, "secrets");
    const result = await signon("credentials", "export", "--app", "Publisher", "--api-user", "robot@example.org:Publisher", "--out", out, "--namespace", "publishing", "--replace-secrets", "--json");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).not.toMatch(/[0-9a-f]{64}/);
    const printed = JSON.parse(result.stdout) as { secrets: { expires_at: string | null }[] };
    const tokenExpiry = printed.secrets[1]?.expires_at ?? "";
    expect(printed).toEqual({
      dry_run: false,
      namespace: "publishing",
      secrets: [
        { name: "signon-app-publisher", kind: "client_secret", application: "Publisher", api_user: null, file: join(out, "signon-app-publisher.yaml"), expires_at: null },
        { name: "signon-token-indexing-robot-publisher", kind: "api_token", application: "Publisher", api_user: "robot@example.org", file: join(out, "signon-token-indexing-robot-publisher.yaml"), expires_at: tokenExpiry },
      ],
    });
    // Two years, as `signon tokens issue` gives.
    expect(new Date(tokenExpiry).getTime() - Date.now()).toBeGreaterThan(729 * 86_400_000);

    expect(await modeOf(out)).toBe(0o700);
    expect((await readdir(out)).sort()).toEqual(["signon-app-publisher.yaml", "signon-token-indexing-robot-publisher.yaml"]);
    expect(await modeOf(join(out, "signon-app-publisher.yaml"))).toBe(0o600);
    expect(await modeOf(join(out, "signon-token-indexing-robot-publisher.yaml"))).toBe(0o600);

    const application = readManifest(await readFile(join(out, "signon-app-publisher.yaml"), "utf8"));
    const exportedAt = application.manifest.metadata.annotations["signon.tessera/exported-at"] ?? "";
    expect(application.manifest).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "signon-app-publisher",
        namespace: "publishing",
        labels: { "app.kubernetes.io/managed-by": "signon" },
        annotations: { "signon.tessera/application": "Publisher", "signon.tessera/exported-at": exportedAt },
      },
      type: "Opaque",
      data: { OAUTH_ID: expect.any(String), OAUTH_SECRET: expect.any(String) },
    });
    expect(application.decoded.OAUTH_ID).toBe(publisher.clientId);
    expect(application.decoded.OAUTH_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(application.decoded.OAUTH_SECRET).not.toBe(publisher.clientSecret);

    const token = readManifest(await readFile(join(out, "signon-token-indexing-robot-publisher.yaml"), "utf8"));
    expect(token.manifest).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "signon-token-indexing-robot-publisher",
        namespace: "publishing",
        labels: { "app.kubernetes.io/managed-by": "signon" },
        annotations: {
          "signon.tessera/application": "Publisher",
          "signon.tessera/api-user": "robot@example.org",
          "signon.tessera/expires-at": tokenExpiry,
          "signon.tessera/exported-at": exportedAt,
        },
      },
      type: "Opaque",
      data: { BEARER_TOKEN: expect.any(String) },
    });

    // The exported client secret authenticates the application at POST /token; the one it replaced no longer does.
    const client: TestClient = { clientId: publisher.clientId, clientSecret: application.decoded.OAUTH_SECRET ?? "", redirectUri: publisher.redirectUri };
    const { code } = await obtainCode(app, client, person.email);
    const exchanged = await exchangeCode(app, client, code);
    expect(exchanged.statusCode).toBe(200);
    expect(exchanged.json()).toMatchObject({ token_type: "Bearer", expires_in: 7200 });
    const stale = await exchangeCode(app, { ...client, clientSecret: publisher.clientSecret }, (await obtainCode(app, client, person.email)).code);
    expect(stale.statusCode).toBe(401);
    expect(stale.json()).toMatchObject({ error: "invalid_client" });

    // The exported token is the API user's on Publisher.
    const userJson = await getUserJson(app, token.decoded.BEARER_TOKEN ?? "");
    expect(userJson.statusCode).toBe(200);
    expect(userJson.json()).toMatchObject({ user: { uid: robot.uid, email: "robot@example.org", permissions: ["signin"] } });

    // The event log says what went where, and never holds a secret.
    const events = await exportEvents();
    expect(events.map((event) => ({ subjectUid: event.subjectUid, applicationId: event.applicationId, details: event.details }))).toEqual([
      {
        subjectUid: null,
        applicationId: publisher.application.id,
        details: { kind: "client_secret", secret: "signon-app-publisher", namespace: "publishing", destination: join(out, "signon-app-publisher.yaml") },
      },
      {
        subjectUid: robot.uid,
        applicationId: publisher.application.id,
        details: {
          kind: "api_token",
          secret: "signon-token-indexing-robot-publisher",
          namespace: "publishing",
          destination: join(out, "signon-token-indexing-robot-publisher.yaml"),
          expires_at: tokenExpiry,
        },
      },
    ]);
    const allEvents = JSON.stringify(await database.db.select().from(auditEvents));
    expect(allEvents).not.toContain(application.decoded.OAUTH_SECRET);
    expect(allEvents).not.toContain(token.decoded.BEARER_TOKEN);
    expect(await database.db.select({ action: auditEvents.action }).from(auditEvents).where(inArray(auditEvents.action, ["application_secret_rotated", "token_issued_by_operator"]))).toHaveLength(2);
  });

  it("prints the manifests only when asked with --stdout, and a token for every application where the API user holds signin", async () => {
    const { robot } = await setUp();
    const result = await signon("credentials", "export", "--api-user", "robot@example.org", "--stdout");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const documents = parseAllDocuments(result.stdout);
    expect(Array.isArray(documents) ? documents.map((document) => document.errors) : "not documents").toEqual([[], []]);
    const manifests = (Array.isArray(documents) ? documents : []).map((document) => document.toJS() as { metadata: { name: string; namespace?: string }; data: { BEARER_TOKEN: string } });
    expect(manifests.map((manifest) => [manifest.metadata.name, manifest.metadata.namespace])).toEqual([
      ["signon-token-indexing-robot-publisher", undefined],
      ["signon-token-indexing-robot-search", undefined],
    ]);
    for (const manifest of manifests) {
      const answer = await getUserJson(app, Buffer.from(manifest.data.BEARER_TOKEN, "base64").toString("utf8"));
      expect(answer.json()).toMatchObject({ user: { uid: robot.uid } });
    }
    expect((await exportEvents()).map((event) => event.details)).toEqual([
      expect.objectContaining({ secret: "signon-token-indexing-robot-publisher", destination: "standard output", namespace: null }),
      expect.objectContaining({ secret: "signon-token-indexing-robot-search", destination: "standard output", namespace: null }),
    ]);
  });

  it("with --dry-run lists what it would write and issues, replaces and writes nothing", async () => {
    const { publisher } = await setUp();
    const out = join(scratch, "secrets");
    const result = await signon("credentials", "export", "--app", "Publisher", "--api-user", "robot@example.org:Search", "--out", out, "--dry-run");
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `signon-app-publisher\tPublisher: client id and a new client secret → ${join(out, "signon-app-publisher.yaml")}`,
        `signon-token-indexing-robot-search\trobot@example.org on Search: a new API token → ${join(out, "signon-token-indexing-robot-search.yaml")}`,
        "Dry run: 2 secrets would be written; nothing was issued or replaced.",
        "",
      ].join("\n"),
    });
    await expect(stat(out)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await exportEvents()).toEqual([]);
    const [stored] = await database.db.select({ hash: applications.clientSecretHash }).from(applications).where(eq(applications.id, publisher.application.id));
    expect(stored?.hash).toBe(publisher.application.clientSecretHash);
  });

  it("says what it wrote without printing a secret, and that the old client secret no longer works", async () => {
    await setUp();
    const out = join(scratch, "secrets");
    const result = await signon("credentials", "export", "--app", "Publisher", "--out", out, "--replace-secrets");
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `signon-app-publisher\tPublisher: client id and a new client secret → ${join(out, "signon-app-publisher.yaml")}`,
        "Wrote 1 secret (mode 0600).",
        "The applications' previous client secrets no longer work: deploy the new ones now.",
        "",
      ].join("\n"),
    });
    // A second export into the same directory replaces the file.
    expect((await signon("credentials", "export", "--app", "Publisher", "--out", out, "--replace-secrets")).code).toBe(0);
    expect(await readdir(out)).toEqual(["signon-app-publisher.yaml"]);
  });

  it("refuses what it cannot do, with a message, and changes nothing", async () => {
    const { publisher } = await setUp();
    await createUser(ctx, { email: "ada@example.org", permissions: { Publisher: ["signin"] } });
    await createApiUser(ctx, { email: "idle@example.org", name: "Idle robot" });
    const open = join(scratch, "open");
    await mkdir(open, { mode: 0o755 });
    await chmod(open, 0o755);
    const out = join(scratch, "secrets");
    const usage: [string[], string][] = [
      [["--out", out], "Name what to export: --app NAME and/or --api-user EMAIL[:APP]"],
      [["--api-user", "robot@example.org"], "Give --out DIR (one file per secret) or --stdout (the manifests printed), one of them"],
      [["--api-user", "robot@example.org", "--out", out, "--stdout"], "Give --out DIR (one file per secret) or --stdout (the manifests printed), one of them"],
      [["--api-user", "robot@example.org", "--stdout", "--json"], "--stdout prints the manifests as YAML; leave out --json"],
      [["--api-user", ":Publisher", "--stdout"], "--api-user is EMAIL or EMAIL:APPLICATION, not :Publisher"],
      [["--api-user", "robot@example.org", "--stdout", "--namespace", "Publishing_NS"], "--namespace Publishing_NS is not a Kubernetes namespace name: lower-case letters, digits and hyphens, at most 63, starting and ending with a letter or digit"],
      [["--api-user", "robot@example.org", "--stdout", "--expires-in", "soon"], "--expires-in is a whole number of seconds"],
      [
        ["--app", "Publisher", "--out", out],
        "An application's client secret is kept only as a digest, so exporting it means giving the application a new one, and its current secret stops working at once. Add --replace-secrets to do that (deploy the new secret straight after), or --dry-run to see what would be written",
      ],
    ];
    for (const [argv, message] of usage) {
      const result = await signonHere("credentials", "export", ...argv);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr.split("\n")[0] }, argv.join(" ")).toEqual({ code: 2, stdout: "", stderr: message });
    }
    await database.db.update(applications).set({ retired: true }).where(eq(applications.id, publisher.application.id));
    const refused: [string[], string][] = [
      [["--app", "Nope", "--out", out, "--replace-secrets"], "signon: No application is named Nope"],
      [["--app", "Publisher", "--out", out, "--replace-secrets"], "signon: Publisher is retired: bring it back before exporting its credentials"],
      [["--api-user", "ada@example.org", "--out", out], "signon: ada@example.org is not an API user: only API users' tokens are exported"],
      [["--api-user", "idle@example.org", "--out", out], "signon: idle@example.org holds signin on no application, so it has no token to export; grant it first"],
      [["--api-user", "idle@example.org:Search", "--out", out], "signon: idle@example.org does not hold signin on Search; grant it first"],
      [["--api-user", "robot@example.org", "--out", open], `signon: ${open} can be opened by other users (mode 0755): use a directory only you can open (chmod 700 ${open})`],
      [["--api-user", "robot@example.org", "--stdout", "--expires-in", "5"], "signon: expires-in is a whole number of seconds from 60 to ten years"],
    ];
    for (const [argv, message] of refused) {
      const result = await signonHere("credentials", "export", ...argv);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }, argv.join(" ")).toEqual({ code: 1, stdout: "", stderr: `${message}\n` });
    }
    await expect(stat(out)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(open)).toEqual([]);
    expect(await exportEvents()).toEqual([]);
  });

  // Node 20's recursive mkdir never returns under /proc (it spins at full CPU), through a link there too.
  it("refuses a directory under /proc or /sys, and makes a new directory one level at a time, stopping at one it cannot make", { timeout: 20_000 }, async () => {
    await setUp();
    const kernelLink = join(scratch, "kernel");
    await symlink("/proc", kernelLink);
    const refused: [string, string][] = [
      ["/proc/tessera-export/secrets", "signon: /proc/tessera-export/secrets is under /proc, a file system of the kernel: choose a directory on disk"],
      ["/sys/tessera-export", "signon: /sys/tessera-export is under /sys, a file system of the kernel: choose a directory on disk"],
      ["/proc", "signon: /proc is under /proc, a file system of the kernel: choose a directory on disk"],
      [join(kernelLink, "tessera-export", "secrets"), `signon: Cannot create ${join(kernelLink, "tessera-export", "secrets")}: ENOENT`],
    ];
    for (const [out, message] of refused) {
      const result = await signonHere("credentials", "export", "--api-user", "robot@example.org", "--out", out);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }, out).toEqual({ code: 1, stdout: "", stderr: `${message}\n` });
    }
    expect(await exportEvents()).toEqual([]);

    // Several missing levels are made, each private, the last one 0700 whatever the umask.
    const deep = join(scratch, "a", "b", "secrets");
    const result = await signonHere("credentials", "export", "--api-user", "robot@example.org:Publisher", "--out", deep);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(await readdir(deep)).toEqual(["signon-token-indexing-robot-publisher.yaml"]);
    expect(await modeOf(deep)).toBe(0o700);
    expect((await modeOf(join(scratch, "a"))) & 0o077).toBe(0);
  });
});
