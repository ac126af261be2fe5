import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { checkNewPassword } from "../../src/accounts/password-policy.js";
import { auditEvents, users } from "../../src/db/schema.js";
import { runSignonCli } from "../support/cli.js";
import { openTestDatabase, testConfig } from "../support/signon.js";

const database = await openTestDatabase();
afterAll(() => database.close());
beforeEach(() => database.reset());

const signon = (...argv: string[]) => runSignonCli(database.url, argv);
const policyContext = () => ({ db: database.db, config: testConfig() });

describe("signon CLI", () => {
  it("apps create --json prints exactly one JSON object with the client id and secret", async () => {
    const result = await signon("apps", "create", "--name", "Publisher", "--redirect-uri", "https://pub.example/cb", "--redirect-uri", "https://pub.example/cb2", "--permissions", "admin,editor", "--json");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({
      name: "Publisher",
      client_id: expect.stringMatching(/^[0-9a-f]{64}$/),
      client_secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      redirect_uris: ["https://pub.example/cb", "https://pub.example/cb2"],
      permissions: ["admin", "editor", "signin"],
    });
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("users create --generate-password prints the password once", async () => {
    const result = await signon("users", "create", "--email", "Ada@Example.org", "--name", "Ada", "--role", "superadmin", "--generate-password", "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: "Ada@Example.org",
      name: "Ada",
      role: "superadmin",
      organisation: null,
      password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
    });
  });

  it("users create --generate-password makes a password that passes the web's policy", async () => {
    for (const [email, name] of [["gen1@example.org", "Gen One"], ["gen2@example.org", "Gen Two"], ["gen3@example.org", "Gen Three"]] as const) {
      const created = JSON.parse((await signon("users", "create", "--email", email, "--name", name, "--generate-password", "--json")).stdout);
      expect(await checkNewPassword(policyContext(), { email, name }, created.password)).toEqual({});
    }
  });

  it("users create --password refuses what the web refuses, with the web's message, and creates nothing", async () => {
    const webMessage = (await checkNewPassword(policyContext(), { email: "ada@example.org", name: "Ada" }, "password1234")).password;
    expect(webMessage).toBe("Choose a password that is harder to guess: This is similar to a commonly used password. A few unrelated words make a good one.");

    expect(await signon("users", "create", "--email", "ada@example.org", "--name", "Ada", "--password", "password1234", "--json")).toEqual({
      code: 1,
      stdout: "",
      stderr: `signon: ${webMessage}\n`,
    });
    expect(await signon("users", "create", "--email", "ada@example.org", "--name", "Ada", "--password", "short")).toMatchObject({
      code: 1,
      stderr: "signon: Enter a password of at least 10 characters\n",
    });
    // The person's own name and address count as easy guesses, as on the web.
    expect(await signon("users", "create", "--email", "ada.lovelace@example.org", "--name", "Ada Lovelace", "--password", "ada.lovelace@example.org")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("signon: Choose a password that is harder to guess"),
    });
    expect(await database.db.select().from(users)).toEqual([]);
    expect(await database.db.select().from(auditEvents)).toEqual([]);

    const accepted = await signon("users", "create", "--email", "ada@example.org", "--name", "Ada", "--password", "lantern quarry velvet harbour", "--json");
    expect(accepted).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(accepted.stdout)).toMatchObject({ email: "ada@example.org" });
    expect(await database.db.select({ email: users.email }).from(users)).toEqual([{ email: "ada@example.org" }]);
  });

  it("grants and revokes permissions, and issues a token for an API user", async () => {
    await signon("apps", "create", "--name", "Completion", "--redirect-uri", "https://completion.example/cb", "--permissions", "staff");
    await signon("api-users", "create", "--name", "Reporting", "--email", "reporting@example.org");
    const granted = await signon("permissions", "grant", "--email", "reporting@example.org", "--app", "Completion", "--permissions", "signin,staff", "--json");
    expect(JSON.parse(granted.stdout)).toEqual({ email: "reporting@example.org", app: "Completion", permissions: ["signin", "staff"] });

    const issued = await signon("tokens", "issue", "--email", "reporting@example.org", "--app", "Completion", "--expires-in", "3600", "--json");
    expect(issued.code).toBe(0);
    expect(JSON.parse(issued.stdout)).toEqual({
      access_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      token_type: "Bearer",
      expires_at: expect.any(String),
      uid: expect.any(String),
    });

    const revoked = await signon("permissions", "revoke", "--email", "reporting@example.org", "--app", "Completion", "--permissions", "staff", "--json");
    expect(JSON.parse(revoked.stdout).permissions).toEqual(["signin"]);
  });

  it("creates an organisation and a user in it", async () => {
    const created = await signon("organisations", "create", "--slug", "ministry-of-magic", "--name", "Ministry of Magic", "--content-id", "0A1B2C3D-0000-4000-8000-000000000001", "--json");
    expect(JSON.parse(created.stdout)).toEqual({ slug: "ministry-of-magic", name: "Ministry of Magic", content_id: "0a1b2c3d-0000-4000-8000-000000000001" });
    const user = await signon("users", "create", "--email", "min@example.org", "--name", "Min", "--organisation", "ministry-of-magic", "--json");
    expect(JSON.parse(user.stdout)).toMatchObject({ organisation: "ministry-of-magic" });
    expect(await signon("users", "create", "--email", "x@example.org", "--name", "X", "--organisation", "nope")).toMatchObject({
      code: 1,
      stderr: "signon: No organisation has slug nope\n",
    });
  });

  it("suspends with a reason and unsuspends", async () => {
    await signon("users", "create", "--email", "bob@example.org", "--name", "Bob", "--password", "a long enough password");
    expect(await signon("users", "suspend", "--email", "bob@example.org")).toMatchObject({ code: 2, stderr: expect.stringContaining("--reason is required") });
    const suspended = await signon("users", "suspend", "--email", "bob@example.org", "--reason", "Left the team", "--json");
    expect(JSON.parse(suspended.stdout)).toMatchObject({ email: "bob@example.org", suspended: true, reason: "Left the team" });
    const unsuspended = await signon("users", "unsuspend", "--email", "bob@example.org", "--json");
    expect(JSON.parse(unsuspended.stdout)).toMatchObject({ suspended: false });
  });

  it.each([
    [["users", "frob"], 2, /Unknown command: users frob/],
    [["apps", "create", "--name", "X"], 2, /--redirect-uri is required/],
    [["apps", "create", "--name", "X", "--redirect-uri", "http://x.example/cb"], 1, /must use https/],
    [["users", "create", "--email", "a@example.org", "--name", "A", "--bogus"], 2, /Unknown option '--bogus'/],
    [["users", "create", "--email", "not-an-email", "--name", "A"], 1, /Not an e-mail address/],
    [["users", "create", "--email", "a@example.org", "--name", "A", "--role", "emperor"], 2, /--role must be one of/],
    [["tokens", "issue", "--email", "nobody@example.org", "--app", "X"], 1, /No user has e-mail nobody@example.org/],
    [["permissions", "grant", "--email", "nobody@example.org", "--app", "X", "--permissions", "signin"], 1, /No user has e-mail/],
  ])("%j exits %i with the reason on stderr and nothing on stdout", async (argv, code, message) => {
    const result = await signon(...argv);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
  });

  it("refuses a second application with the same name", async () => {
    await signon("apps", "create", "--name", "Dup", "--redirect-uri", "https://dup.example/cb");
    expect(await signon("apps", "create", "--name", "Dup", "--redirect-uri", "https://dup.example/cb", "--json")).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "signon: An application named Dup already exists\n",
    });
  });
});

describe("signon pushes", () => {
  async function queuedPush() {
    await signon("apps", "create", "--name", "Publisher", "--redirect-uri", "https://pub.example/cb");
    await signon("users", "create", "--email", "ada@example.org", "--name", "Ada", "--password", "correct horse battery staple");
    await signon("permissions", "grant", "--email", "ada@example.org", "--app", "Publisher", "--permissions", "signin");
  }

  it("pushes list --json shows each push with its status, attempts and last error", async () => {
    await queuedPush();

    const result = await signon("pushes", "list", "--status", "pending", "--json");

    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({
      pushes: [
        {
          id: 1,
          user_uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
          email: "ada@example.org",
          application: "Publisher",
          kind: "update",
          status: "pending",
          attempts: 0,
          queued_at: expect.any(String),
          next_attempt_at: expect.any(String),
          last_attempt_at: null,
          delivered_at: null,
          last_error: null,
        },
      ],
    });
    expect(JSON.parse((await signon("pushes", "list", "--status", "failed", "--json")).stdout)).toEqual({ pushes: [] });
  });

  it("users update queues a PUT to each application that issued the user a token", async () => {
    await queuedPush();
    await signon("tokens", "issue", "--email", "ada@example.org", "--app", "Publisher");
    await database.pool.query("update signon.push_deliveries set status = 'delivered'");

    const result = await signon("users", "update", "--email", "ada@example.org", "--name", "Ada Lovelace", "--json");

    expect(result.code).toBe(0);
    expect(JSON.parse((await signon("pushes", "list", "--status", "pending", "--json")).stdout)).toEqual({
      pushes: [expect.objectContaining({ email: "ada@example.org", application: "Publisher", kind: "update", status: "pending" })],
    });
  });

  it("pushes retry ID makes a failed push due again; an unknown id is refused", async () => {
    await queuedPush();
    await database.pool.query("update signon.push_deliveries set status = 'failed', attempts = 9, last_error = 'HTTP 404'");

    const retried = await signon("pushes", "retry", "1", "--json");
    const unknown = await signon("pushes", "retry", "99");
    const missing = await signon("pushes", "retry");

    expect(JSON.parse(retried.stdout)).toEqual({ id: 1, status: "pending" });
    expect(JSON.parse((await signon("pushes", "list", "--json")).stdout)).toEqual({
      pushes: [expect.objectContaining({ id: 1, status: "pending", attempts: 0, last_error: "HTTP 404" })],
    });
    expect(unknown).toMatchObject({ code: 1, stderr: "signon: No push has id 99\n" });
    expect(missing.code).toBe(2);
  });

  it("users invite-batch invites the rows of a CSV file with a role, organisation and permissions, printing each row's outcome", async () => {
    const directory = await mkdtemp(join(tmpdir(), "signon-batch-"));
    try {
      await signon("apps", "create", "--name", "Publisher", "--redirect-uri", "https://pub.example/cb", "--permissions", "editor");
      await signon("organisations", "create", "--slug", "home-office", "--name", "Home Office");
      await signon("users", "create", "--email", "taken@example.org", "--name", "Taken");
      const file = join(directory, "people.csv");
      await writeFile(file, "Name,Email\nAda,ada@example.org\nTaken,taken@example.org\nBad,not-an-address\n");

      const text = await signon("users", "invite-batch", file, "--organisation", "Home Office", "--permission", "Publisher:editor", "--permission", "Publisher:signin");
      expect(text).toMatchObject({ code: 0, stderr: "" });
      expect(text.stdout.trim().split("\n")).toEqual([
        "line 2\tinvited\tada@example.org",
        "line 3\texists\ttaken@example.org\tAn account already has this e-mail address",
        'line 4\tinvalid\tnot-an-address\tNot an e-mail address: "not-an-address"',
        "1 invited, 1 already had an account, 1 not valid, of 3.",
      ]);
      const again = await signon("users", "invite-batch", file, "--json");
      expect(JSON.parse(again.stdout)).toMatchObject({ counts: { pending: 0, invited: 0, exists: 2, invalid: 1 } });

      expect(await signon("users", "invite-batch", file, "--permission", "Publisher:publish")).toMatchObject({
        code: 1,
        stderr: "signon: Publisher does not support publish (it supports editor, signin)\n",
      });
      expect((await signon("users", "invite-batch", file, "--permission", "Publisher")).code).toBe(2);
      expect(await signon("users", "invite-batch", join(directory, "missing.csv"))).toMatchObject({ code: 1, stderr: `signon: Cannot read ${join(directory, "missing.csv")}: ENOENT\n` });
      await writeFile(file, Buffer.from([0xff, 0xfe, 0x41, 0x2c]));
      expect((await signon("users", "invite-batch", file)).stderr).toContain("The file is not UTF-8 text");
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("users create refuses an address the e-mail domain policy refuses", async () => {
    // SIGNON_EMAIL_DOMAINS_BLOCKED unset: the built-in consumer mail services are refused.
    const personal = await signon("users", "create", "--email", "ada@gmail.com", "--name", "Ada");
    expect(personal).toMatchObject({ code: 1, stderr: "signon: Addresses at gmail.com, a personal e-mail service, cannot be used here: use a work e-mail address\n" });
    const refused = await runSignonCli(database.url, ["users", "create", "--email", "ada@old.example.org", "--name", "Ada"], { SIGNON_EMAIL_DOMAINS_BLOCKED: "old.example.org" });
    expect(refused).toMatchObject({ code: 1, stderr: "signon: E-mail addresses at old.example.org cannot be used here; use a work address\n" });
    const nonAscii = await signon("users", "create", "--email", "adä@example.org", "--name", "Ada");
    expect(nonAscii).toMatchObject({ code: 1, stderr: "signon: Use an e-mail address made of ASCII letters, digits and punctuation only\n" });
    const allowed = await runSignonCli(database.url, ["users", "create", "--email", "adä@example.org", "--name", "Ada"], { SIGNON_EMAIL_ALLOW_NON_ASCII: "true" });
    expect(allowed.code).toBe(0);
  });
});
