import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { applications, auditEvents, renewedTokens } from "../../src/db/schema.js";
import { runSignonCli } from "../support/cli.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
afterAll(() => database.close());
beforeEach(() => database.reset());

const secretKey = { SIGNON_SECRET_KEY: "5e".repeat(32) };
const signon = (...argv: string[]) => runSignonCli(database.url, argv, secretKey);

describe("signon apps update", () => {
  it("renames an application and sets its API-only flag, push switch, default and web-grantable permissions", async () => {
    await signon("apps", "create", "--name", "Publisher", "--redirect-uri", "https://pub.example/cb", "--permissions", "admin,editor");
    const updated = await signon(
      "apps", "update", "--app", "Publisher", "--name", "Publishing", "--api-only", "yes", "--pushes", "off",
      "--default-permissions", "signin,editor", "--not-grantable-in-ui", "admin", "--json",
    );
    expect(updated).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(updated.stdout)).toEqual({
      name: "Publishing",
      api_only: true,
      pushes: "off",
      default_permissions: ["editor", "signin"],
      not_grantable_in_ui: ["admin"],
      changed: ["apiOnly", "defaultPermissions", "name", "permissionsNotGrantableInUi", "pushEnabled"],
    });
    const again = await signon("apps", "update", "--app", "Publishing", "--pushes", "on", "--no-default-permissions", "--all-grantable-in-ui", "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ pushes: "on", default_permissions: [], not_grantable_in_ui: [] });
    expect(await database.db.select().from(auditEvents).where(eq(auditEvents.action, "application_updated"))).toHaveLength(2);
  });

  it("refuses an unknown application, a taken name, an unsupported permission and a bad switch", async () => {
    await signon("apps", "create", "--name", "Publisher", "--redirect-uri", "https://pub.example/cb");
    await signon("apps", "create", "--name", "Other", "--redirect-uri", "https://other.example/cb");
    expect(await signon("apps", "update", "--app", "Nope", "--pushes", "off")).toMatchObject({ code: 1, stderr: "signon: No application is named Nope\n" });
    expect(await signon("apps", "update", "--app", "Publisher", "--name", "Other")).toMatchObject({ code: 1, stderr: "signon: An application named Other already exists\n" });
    expect((await signon("apps", "update", "--app", "Publisher", "--default-permissions", "admin")).stderr).toContain("Default permissions must be supported ones: admin is not");
    expect((await signon("apps", "update", "--app", "Publisher", "--pushes", "maybe")).code).toBe(2);
    expect((await signon("apps", "update", "--app", "Publisher", "--default-permissions", "signin", "--no-default-permissions")).code).toBe(2);
  });
});

describe("signon apps show", () => {
  it("shows the delegatable permissions and the push base, registered or the origin of the first redirect URI", async () => {
    await signon("apps", "create", "--name", "Publisher", "--redirect-uri", "https://pub.example/auth/gds/callback", "--permissions", "admin,editor");
    await signon("apps", "create", "--name", "Search", "--redirect-uri", "https://search.example/cb", "--push-base", "https://search.example/auth/gds/api");
    await database.db.update(applications).set({ delegatablePermissions: ["editor", "signin"] }).where(eq(applications.name, "Publisher"));
    await signon("apps", "update", "--app", "Search", "--pushes", "off");

    const publisher = await signon("apps", "show", "--app", "Publisher", "--json");
    expect(publisher).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(publisher.stdout)).toMatchObject({
      name: "Publisher",
      permissions: ["admin", "editor", "signin"],
      delegatable_permissions: ["editor", "signin"],
      push_base: "https://pub.example",
      push_base_registered: false,
      pushes: "on",
    });
    expect(JSON.parse((await signon("apps", "show", "--app", "Search", "--json")).stdout)).toMatchObject({
      delegatable_permissions: [],
      push_base: "https://search.example/auth/gds/api",
      push_base_registered: true,
      pushes: "off",
    });

    const text = (await signon("apps", "show", "--app", "Publisher")).stdout.split("\n");
    expect(text).toContain("delegatable:   editor, signin");
    expect(text).toContain("push base:     https://pub.example (the origin of the first redirect URI); pushes on");
    expect((await signon("apps", "show", "--app", "Search")).stdout.split("\n")).toEqual(
      expect.arrayContaining(["delegatable:   none", "push base:     https://search.example/auth/gds/api; pushes off"]),
    );
  });
});

describe("signon apps usage", () => {
  it("prints the monthly unique users and the latest sign-ins as one JSON object", async () => {
    await signon("apps", "create", "--name", "Publisher", "--redirect-uri", "https://pub.example/cb");
    const result = await signon("apps", "usage", "Publisher", "--json");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const usage = JSON.parse(result.stdout) as { name: string; monthly_unique_users: { month: string; users: number; sign_ins: number }[]; recent_sign_ins: unknown[] };
    expect(usage.name).toBe("Publisher");
    expect(usage.monthly_unique_users).toHaveLength(12);
    expect(usage.monthly_unique_users[0]).toEqual({ month: new Date().toISOString().slice(0, 7), users: 0, sign_ins: 0 });
    expect(usage.recent_sign_ins).toEqual([]);
    expect((await signon("apps", "usage", "Nope")).code).toBe(1);
    expect((await signon("apps", "usage")).code).toBe(2);
  });
});

describe("signon api-users auto-renewal and tokens renew-expiring", () => {
  it("turns renewal on, renews a token close to expiring once without printing it, leaves a fresh 10-day token alone, and refuses people", async () => {
    await signon("apps", "create", "--name", "Search", "--redirect-uri", "https://search.example/cb");
    await signon("api-users", "create", "--name", "Indexer", "--email", "indexer@example.org");
    await signon("users", "create", "--name", "Ada", "--email", "ada@example.org");
    await signon("permissions", "grant", "--email", "indexer@example.org", "--app", "Search", "--permissions", "signin");
    const issued = await signon("tokens", "issue", "--email", "indexer@example.org", "--app", "Search", "--expires-in", String(10 * 86_400), "--json");
    expect(issued.code).toBe(0);

    expect(JSON.parse((await signon("tokens", "renew-expiring", "--json")).stdout)).toEqual({ renewed: 0 });
    const on = await signon("api-users", "auto-renewal", "--email", "indexer@example.org", "--on", "--json");
    expect(JSON.parse(on.stdout)).toEqual({ email: "indexer@example.org", token_auto_renewal: true });
    // A 10-day token with all 10 days left is not close to expiring, however often the command runs.
    for (let run = 0; run < 2; run += 1) expect(JSON.parse((await signon("tokens", "renew-expiring", "--json")).stdout)).toEqual({ renewed: 0 });
    expect(await database.db.select().from(renewedTokens)).toHaveLength(0);

    // An hour-long token is inside its window at once: renewed once, by a token living a day that is not renewed in turn.
    await signon("tokens", "issue", "--email", "indexer@example.org", "--app", "Search", "--expires-in", "3600", "--json");
    const renewed = await signon("tokens", "renew-expiring", "--json");
    expect(JSON.parse(renewed.stdout)).toEqual({ renewed: 1 });
    expect(renewed.stdout).not.toMatch(/[0-9a-f]{64}/);
    const text = await signon("tokens", "renew-expiring");
    expect(text.stdout).toBe(
      "Renewed 0 API token(s); each token is renewed once, when a third of its lifetime is left (at most 30 days, at least 2 hours before it expires). The new tokens are shown on the API users' pages, not here.\n",
    );
    expect(await database.db.select().from(renewedTokens)).toHaveLength(1);

    expect(await signon("api-users", "auto-renewal", "--email", "ada@example.org", "--on")).toMatchObject({ code: 1, stderr: "signon: ada@example.org is not an API user\n" });
    expect((await signon("api-users", "auto-renewal", "--email", "indexer@example.org")).code).toBe(2);
  });
});
