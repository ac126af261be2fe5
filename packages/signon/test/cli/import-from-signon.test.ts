// `signon import from-signon` against a GOV.UK Signon database on MariaDB (started by the test), with rows made as
// Signon makes them (test/support/signon-database): what comes over, what is refused and why, passwords and 2-step
// secrets that keep working, bearer tokens that keep working, and a second run that brings only what changed.
// Needs Debian's mariadb-server; skipped without it, except under CI=true.
import { eq } from "drizzle-orm";
import { TOTP } from "otpauth";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { checkNewPassword } from "../../src/accounts/password-policy.js";
import { signInWithPassword } from "../../src/accounts/sign-in.js";
import { applications, organisations, passwordHistory, userPermissions, users } from "../../src/db/schema.js";
import { openSecret } from "../../src/security/secret-box.js";
import { sha256Hex } from "../../src/security/random.js";
import { runSignonCli } from "../support/cli.js";
import { activeRecordKeys, aliceEarlierPasswords, mariadbUnavailable, pepper, startMariadb, writeSignonFixture, type MariadbServer, type SignonFixture } from "@tessera/test-support/signon-database";
import { InjectBrowser } from "../support/browser.js";
import { refresh } from "../support/flow.js";
import { buildTestSignon, openTestDatabase, testConfig, type TestSignon } from "../support/signon.js";

const missing = mariadbUnavailable();
if (missing !== null && process.env["CI"] === "true") throw new Error(`${missing}; CI must run the import tests`);

const secretKey = "5e".repeat(32);
const keys = { ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY: activeRecordKeys.primaryKey, ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT: activeRecordKeys.derivationSalt };

describe.skipIf(missing !== null)("signon import from-signon", () => {
  let mariadb: MariadbServer;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let signon: TestSignon;
  let source: string;
  let fixture: SignonFixture;

  const importFromSignon = async (...argv: string[]) => {
    const run = await runSignonCli(database.url, ["import", "from-signon", source, "--json", ...argv], { SIGNON_SECRET_KEY: secretKey, ...keys });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout) as {
      dry_run: boolean;
      counts: Record<string, { created: number; updated: number; unchanged: number; removed: number }>;
      refusals: { kind: string; what: string; reason: string }[];
      two_step_to_set_up_again: number;
    };
  };

  beforeAll(async () => {
    mariadb = await startMariadb();
    database = await openTestDatabase();
    signon = await buildTestSignon(database, testConfig({ SIGNON_IMPORTED_PASSWORD_PEPPER: pepper }));
  }, 120_000);
  afterAll(async () => {
    await signon?.app.close();
    await database?.close();
    await mariadb?.stop();
  });
  beforeEach(async () => {
    await database.reset();
    // Signon's rows are dated from the real clock: Sign-on's reads the same time.
    signon.clock.advance((Date.now() - signon.clock.now().getTime()) / 1000);
    source = await mariadb.createDatabase("signon_production");
    fixture = await writeSignonFixture(mariadb, "signon_production");
  });

  it("reports in a dry run what it would create and every refusal, and saves nothing", async () => {
    const report = await importFromSignon("--dry-run");
    expect(report.dry_run).toBe(true);
    expect(report.counts).toEqual({
      organisations: { created: 3, updated: 0, unchanged: 0, removed: 0 },
      applications: { created: 2, updated: 0, unchanged: 0, removed: 0 },
      users: { created: 6, updated: 0, unchanged: 0, removed: 0 },
      passwords: { created: 6, updated: 0, unchanged: 0, removed: 0 },
      twoStepSecrets: { created: 1, updated: 0, unchanged: 0, removed: 0 },
      permissions: { created: 8, updated: 0, unchanged: 0, removed: 0 },
      tokens: { created: 3, updated: 0, unchanged: 0, removed: 0 },
      events: { created: 4, updated: 0, unchanged: 0, removed: 0 },
    });
    expect(report.refusals).toEqual([
      { kind: "organisation", what: "department-of-odd-ids", reason: 'Its content id "not-a-uuid" is not a UUID' },
      { kind: "user", what: "dave@gmail.com", reason: "Sign-on's e-mail policy refuses it: Addresses at gmail.com, a personal e-mail service, cannot be used here: use a work e-mail address" },
      { kind: "permission", what: "Old Tool (1 permission)", reason: "The application is retired" },
    ]);
    expect(report.two_step_to_set_up_again).toBe(0);
    expect(await database.db.select().from(users)).toEqual([]);
    expect(await database.db.select().from(applications)).toEqual([]);
  });

  it("prints the report for a person to read", async () => {
    const run = await runSignonCli(database.url, ["import", "from-signon", source, "--dry-run"], { SIGNON_SECRET_KEY: secretKey });
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toContain("Dry run, nothing was saved. A real run would:\n  organisations: 3 new, 0 changed, 0 unchanged\n");
    expect(run.stdout).toContain("1 people with 2-step in Signon will set it up again");
    expect(run.stdout).toContain("3 refused:\n  organisation\tdepartment-of-odd-ids\tIts content id \"not-a-uuid\" is not a UUID\n");
  });

  it("brings organisations, applications and people over with Signon's ids, client ids and secrets", async () => {
    await importFromSignon();
    const orgs = await database.db.select().from(organisations);
    const bySlug = new Map(orgs.map((organisation) => [organisation.slug, organisation]));
    expect(bySlug.get("gds-publishing")?.parentId).toBe(bySlug.get("government-digital-service")?.id);
    expect(bySlug.get("gds-publishing-tools")?.parentId).toBe(bySlug.get("gds-publishing")?.id);
    expect(bySlug.get("gds-publishing")).toMatchObject({ contentId: "0c0e2f7d-8b4c-4f0e-9a4b-1b2c3d4e5f60", twoStepRequired: true });

    const [publisher] = await database.db.select().from(applications).where(eq(applications.clientId, fixture.publisher.clientId));
    expect(publisher).toMatchObject({
      name: "Publisher",
      clientSecretHash: sha256Hex(fixture.publisher.secret),
      redirectUris: [fixture.publisher.redirectUri],
      homeUri: "https://publisher.example",
      pushBaseUrl: "https://publisher.example/auth/gds/api",
      retired: false,
      pushEnabled: true,
      supportedPermissions: ["signin", "user_update_permission", "GDS Editor", "Managing Editor"],
      delegatablePermissions: ["signin", "Managing Editor"],
      defaultPermissions: ["Managing Editor"],
      permissionsNotGrantableInUi: ["user_update_permission"],
    });
    const [oldTool] = await database.db.select().from(applications).where(eq(applications.name, "Old Tool"));
    expect(oldTool?.retired).toBe(true);

    const people = new Map((await database.db.select().from(users)).map((user) => [user.email, user]));
    expect(people.get(fixture.alice.email)).toMatchObject({ uid: fixture.alice.uid, role: "admin", organisationId: bySlug.get("government-digital-service")?.id });
    expect(people.get(fixture.bob.email)).toMatchObject({ uid: fixture.bob.uid, suspensionReason: "Left the organisation", suspendedAt: expect.any(Date) });
    expect(people.get(fixture.carol.email)).toMatchObject({ uid: fixture.carol.uid, passwordHash: null, invitationSentAt: expect.any(Date) });
    expect(people.get(fixture.erin.email)).toMatchObject({ twoStepExemptionReason: "Uses a shared device", twoStepExemptUntil: expect.any(Date) });
    expect(people.get(fixture.publishingApi.email)).toMatchObject({ uid: fixture.publishingApi.uid, isApiUser: true, passwordHash: null });
    expect(people.has("dave@gmail.com")).toBe(false);

    const alicePermissions = await database.db.select({ permission: userPermissions.permission }).from(userPermissions).where(eq(userPermissions.userUid, fixture.alice.uid));
    expect(alicePermissions.map((row) => row.permission).sort()).toEqual(["GDS Editor", "Managing Editor", "signin"]);
  });

  it("lets a person sign in with their Signon password, replaced at once by Sign-on's own; their earlier passwords still count as recent", async () => {
    await importFromSignon();
    const origin = { ip: "192.0.2.10", userAgent: "test" };
    const signIn = (email: string, password: string) => signInWithPassword(signon.ctx, { email, password }, origin);
    expect(await signIn(fixture.alice.email, "not the password")).toMatchObject({ ok: false, reason: "invalid" });
    expect(await signIn(fixture.alice.email, fixture.alice.password!)).toMatchObject({ ok: true });
    const [alice] = await database.db.select().from(users).where(eq(users.uid, fixture.alice.uid));
    expect(alice?.passwordHash).toMatch(/^\$argon2id\$/);
    // The replaced hash still takes the same password, and the history holds Signon's two earlier ones and the current.
    expect(await signIn(fixture.alice.email, fixture.alice.password!)).toMatchObject({ ok: true });
    const history = await database.db.select().from(passwordHistory).where(eq(passwordHistory.userUid, fixture.alice.uid));
    expect(history.map((row) => row.passwordHash.slice(0, 15)).sort()).toEqual(["$argon2id$v=19$", "$signon-sha512$", "$signon-sha512$"]);
    // A 2012 account's bcrypt hash, checked without the pepper as Signon did; Bob is suspended, which only a right password tells.
    expect(await signIn(fixture.bob.email, fixture.bob.password!)).toMatchObject({ ok: false, reason: "suspended" });
    expect(await signIn(fixture.erin.email, "erin's password of 2026")).toMatchObject({ ok: true });
  });

  it("refuses Signon's remembered passwords as new ones, in Signon's form and once replaced with Sign-on's", async () => {
    await importFromSignon();
    const alice = async () => (await database.db.select().from(users).where(eq(users.uid, fixture.alice.uid)))[0]!;
    const recent = { password: "Choose a password you have not used before: it cannot be one of your last 2" };
    // The current password and the one before it (Signon's hashes), not the one before that.
    expect(await checkNewPassword(signon.ctx, await alice(), fixture.alice.password!)).toEqual(recent);
    expect(await checkNewPassword(signon.ctx, await alice(), aliceEarlierPasswords[1])).toEqual(recent);
    expect(await checkNewPassword(signon.ctx, await alice(), aliceEarlierPasswords[0])).toEqual({});
    // After a sign-in, the current one is Sign-on's own hash, and still counts.
    expect(await signInWithPassword(signon.ctx, { email: fixture.alice.email, password: fixture.alice.password! }, { ip: "192.0.2.11", userAgent: "test" })).toMatchObject({ ok: true });
    expect(await checkNewPassword(signon.ctx, await alice(), fixture.alice.password!)).toEqual(recent);
    expect(await checkNewPassword(signon.ctx, await alice(), aliceEarlierPasswords[1])).toEqual(recent);
  });

  it("seals each 2-step secret as Sign-on seals its own, so that the authenticator app's codes keep working", async () => {
    await importFromSignon();
    const [alice] = await database.db.select().from(users).where(eq(users.uid, fixture.alice.uid));
    expect(alice?.otpEnabledAt).toEqual(expect.any(Date));
    const secret = openSecret(Buffer.from(secretKey, "hex"), alice!.otpSecretEncrypted!);
    expect(secret).toBe(fixture.alice.otpSecret);
    const code = new TOTP({ secret: fixture.alice.otpSecret!, algorithm: "SHA1", digits: 6, period: 30 }).generate();
    expect(new TOTP({ secret, algorithm: "SHA1", digits: 6, period: 30 }).validate({ token: code, window: 0 })).toBe(0);
  });

  it("signs a person in through the web pages with their Signon password and a code of their old authenticator app", async () => {
    await importFromSignon();
    const browser = new InjectBrowser(signon.app);
    const password = await browser.signIn("/account", fixture.alice.email, fixture.alice.password!);
    expect(password.statusCode).toBe(303);
    const twoStep = String(password.headers.location);
    expect(twoStep).toBe("/sign-in/two-step?return_to=%2Faccount");
    const code = new TOTP({ secret: fixture.alice.otpSecret!, algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: signon.clock.now().getTime() });
    const signedIn = await browser.submit(twoStep, "/sign-in/two-step", { return_to: "/account", code });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe("/account");
    expect((await browser.get("/account")).statusCode).toBe(200);
  });

  it("keeps an API user's bearer token, and a signed-in person's token, working at /user.json; expired and revoked ones stay out", async () => {
    await importFromSignon();
    const userJson = (token: string) => signon.app.inject({ method: "GET", url: "/user.json", headers: { authorization: `Bearer ${token}` } });
    const api = await userJson(fixture.publishingApi.token);
    expect(api.statusCode).toBe(200);
    expect(api.json()).toMatchObject({ user: { uid: fixture.publishingApi.uid, email: fixture.publishingApi.email, permissions: ["signin"] } });
    const alice = await userJson(fixture.aliceToken.token);
    expect(alice.statusCode).toBe(200);
    expect(alice.json()).toMatchObject({ user: { uid: fixture.alice.uid, permissions: expect.arrayContaining(["signin", "GDS Editor", "Managing Editor"]) } });
    expect((await userJson(fixture.pushUser.token)).statusCode).toBe(200);
    expect((await userJson(fixture.expiredToken)).statusCode).toBe(401);
    expect((await userJson(fixture.revokedToken)).statusCode).toBe(401);
    expect((await userJson("not-a-token")).statusCode).toBe(401);
  });

  it("refreshes a signed-in person's token with the refresh token Signon gave, once, for the application's old client id and secret", async () => {
    await importFromSignon();
    const client = { clientId: fixture.publisher.clientId, clientSecret: fixture.publisher.secret, redirectUri: fixture.publisher.redirectUri };
    const refreshed = await refresh(signon.app, client, fixture.aliceToken.refreshToken);
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json()).toMatchObject({ token_type: "Bearer", expires_in: 7200, access_token: expect.stringMatching(/^[0-9a-f]{64}$/), refresh_token: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const user = await signon.app.inject({ method: "GET", url: "/user.json", headers: { authorization: `Bearer ${refreshed.json().access_token}` } });
    expect(user.json()).toMatchObject({ user: { uid: fixture.alice.uid } });
    // Rotated: Signon's refresh token is spent.
    expect((await refresh(signon.app, client, fixture.aliceToken.refreshToken)).statusCode).toBe(400);
  });

  it("brings the event log over in Sign-on's words, keeping Signon's own name for an event Sign-on does not record", async () => {
    await importFromSignon();
    const { rows } = await database.pool.query<{ action: string; subject_uid: string | null; actor_uid: string | null; application_id: string | null; ip: string | null; details: Record<string, unknown> }>(
      "select action, subject_uid, actor_uid, application_id, host(ip) as ip, details from signon.audit_events where details ? 'signon_event_id' order by occurred_at",
    );
    const [publisher] = await database.db.select().from(applications).where(eq(applications.clientId, fixture.publisher.clientId));
    expect(rows).toEqual([
      { action: "sign_in", subject_uid: fixture.alice.uid, actor_uid: null, application_id: null, ip: "192.0.2.1", details: { signon_event_id: 11 } },
      { action: "authorization_code_issued", subject_uid: fixture.alice.uid, actor_uid: null, application_id: publisher!.id, ip: "192.0.2.1", details: { signon_event_id: 47 } },
      { action: "role_changed", subject_uid: fixture.erin.uid, actor_uid: fixture.alice.uid, application_id: null, ip: "2001:db8::1", details: { signon_event_id: 33, signon_message: "from normal to admin" } },
      { action: "signon_event", subject_uid: fixture.bob.uid, actor_uid: null, application_id: null, ip: null, details: { signon_event_id: 26, signon_event: "2-step prompt deferred" } },
    ]);
  });

  it("asks people to set 2-step up again when the keys are not given, and says how many", async () => {
    const run = await runSignonCli(database.url, ["import", "from-signon", source, "--json"], { SIGNON_SECRET_KEY: secretKey });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ two_step_to_set_up_again: 1, counts: { twoStepSecrets: { created: 0 } } });
    const [alice] = await database.db.select().from(users).where(eq(users.uid, fixture.alice.uid));
    expect(alice).toMatchObject({ otpSecretEncrypted: null, otpEnabledAt: null });
  });

  it("brings only what changed on a second run: a new person, a suspension, a permission taken away, a token revoked", async () => {
    await importFromSignon();
    expect(Object.values((await importFromSignon()).counts).every((counts) => counts.created === 0 && counts.updated === 0 && counts.removed === 0)).toBe(true);
    // The event log only grows: a new event comes over, the earlier ones are not brought again.
    await mariadb.run("signon_production", "insert into event_logs (uid, created_at, event_id) values (?, now(), 11)", [fixture.erin.uid]);
    const now = new Date();
    await mariadb.run(
      "signon_production",
      `insert into users (id, name, email, encrypted_password, password_salt, uid, role, organisation_id, created_at, updated_at)
         values (8, 'Frank Example', 'frank@digital.example.gov.uk', '', null, 'a1b2c3d4-0000-1111-2222-333344445555', 'normal', 1, ?, ?);
       update users set suspended_at = ?, reason_for_suspension = 'On leave' where id = 7;
       delete from user_application_permissions where user_id = 1 and supported_permission_id = 3;
       update oauth_access_tokens set revoked_at = ? where token in (?, ?)`,
      [now, now, now, now, fixture.publishingApi.token, fixture.aliceToken.token],
    );
    const report = await importFromSignon();
    expect(report.counts).toMatchObject({
      users: { created: 1, updated: 1, removed: 0 },
      permissions: { created: 0, updated: 0, removed: 1 },
      tokens: { created: 0, removed: 2 },
      organisations: { created: 0, updated: 0 },
      applications: { created: 0, updated: 0 },
      events: { created: 1 },
    });
    const [erin] = await database.db.select().from(users).where(eq(users.uid, fixture.erin.uid));
    expect(erin?.suspensionReason).toBe("On leave");
    const alicePermissions = await database.db.select({ permission: userPermissions.permission }).from(userPermissions).where(eq(userPermissions.userUid, fixture.alice.uid));
    expect(alicePermissions.map((row) => row.permission).sort()).toEqual(["Managing Editor", "signin"]);
    expect((await signon.app.inject({ method: "GET", url: "/user.json", headers: { authorization: `Bearer ${fixture.publishingApi.token}` } })).statusCode).toBe(401);
    // A token Signon revoked takes its refresh token with it.
    const client = { clientId: fixture.publisher.clientId, clientSecret: fixture.publisher.secret, redirectUri: fixture.publisher.redirectUri };
    expect((await refresh(signon.app, client, fixture.aliceToken.refreshToken)).statusCode).toBe(400);
  });

  it("leaves the 2-step secrets an earlier run brought when a later run is not given the keys", async () => {
    await importFromSignon();
    const run = await runSignonCli(database.url, ["import", "from-signon", source, "--json"], { SIGNON_SECRET_KEY: secretKey });
    expect(JSON.parse(run.stdout)).toMatchObject({ two_step_to_set_up_again: 1, counts: { twoStepSecrets: { removed: 0 } } });
    const [alice] = await database.db.select().from(users).where(eq(users.uid, fixture.alice.uid));
    expect(openSecret(Buffer.from(secretKey, "hex"), alice!.otpSecretEncrypted!)).toBe(fixture.alice.otpSecret);
  });

  it("says in one sentence when the Signon database cannot be reached", async () => {
    const run = await runSignonCli(database.url, ["import", "from-signon", "mysql://signon:wrong@127.0.0.1:1/signon_production"], { SIGNON_SECRET_KEY: secretKey });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^signon: Cannot connect to the Signon database: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
  });
});
