import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { setOpenIdSettings } from "../../src/oidc/client-settings.js";
import { applications, auditEvents } from "../../src/db/schema.js";
import { runBuiltSignonCli } from "../support/built-cli.js";
import { runSignonCli } from "../support/cli.js";
import { createApp } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon: system } = await useTestSignon();
const { ctx } = system;
const signon = (...argv: string[]) => runBuiltSignonCli(database.url, argv);
// The many refusals run the same command in this process, where each takes milliseconds rather than a second.
const signonHere = (...argv: string[]) => runSignonCli(database.url, argv, { SIGNON_SECRET_KEY: "5e".repeat(32) });

const live = "publishing.service.gov.uk";

/** Two applications on production's hosts and one elsewhere, as in a copy of production's database. */
async function productionCopy() {
  const publisher = await createApp(ctx, {
    name: "Publisher",
    redirectUris: [`https://publisher.${live}/auth/gds/callback`, "https://publisher.example.net/auth/gds/callback"],
    homeUri: `https://publisher.${live}/`,
    pushBaseUrl: `https://publisher.${live}/auth/gds/api`,
  });
  const whitehall = await createApp(ctx, {
    name: "Whitehall",
    redirectUris: [`https://whitehall-admin.${live}/auth/gds/callback?from=signon`],
  });
  await createApp(ctx, { name: "Elsewhere", redirectUris: ["https://elsewhere.example.org/auth/gds/callback"], homeUri: "https://elsewhere.example.org/" });
  return { publisher: publisher.application, whitehall: whitehall.application };
}

async function storedUris() {
  return database.db
    .select({
      name: applications.name,
      redirectUris: applications.redirectUris,
      homeUri: applications.homeUri,
      pushBaseUrl: applications.pushBaseUrl,
      postLogoutRedirectUris: applications.postLogoutRedirectUris,
      backchannelLogoutUri: applications.backchannelLogoutUri,
    })
    .from(applications)
    .orderBy(asc(applications.name));
}

const rewriteEvents = () => database.db.select().from(auditEvents).where(eq(auditEvents.action, "application_uris_rewritten")).orderBy(asc(auditEvents.id));

describe("signon apps rewrite-uris", () => {
  it("with --dry-run prints each application's URIs old → new and changes nothing", async () => {
    await productionCopy();
    const before = await storedUris();
    const result = await signon("apps", "rewrite-uris", "--from", `*.${live}`, "--to", `*.staging.${live}`, "--dry-run");
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "Publisher",
        `  redirect URI: https://publisher.${live}/auth/gds/callback → https://publisher.staging.${live}/auth/gds/callback`,
        `  home URI: https://publisher.${live}/ → https://publisher.staging.${live}/`,
        `  push base URL: https://publisher.${live}/auth/gds/api → https://publisher.staging.${live}/auth/gds/api`,
        "Whitehall",
        `  redirect URI: https://whitehall-admin.${live}/auth/gds/callback?from=signon → https://whitehall-admin.staging.${live}/auth/gds/callback?from=signon`,
        "Dry run: 4 URIs of 2 applications would change; nothing was saved.",
        "",
      ].join("\n"),
    });
    expect(await storedUris()).toEqual(before);
    expect(await rewriteEvents()).toEqual([]);
  });

  it("rewrites the redirect, home and push URIs of every application on the host, keeping paths, in one run recorded per application", async () => {
    const { publisher, whitehall } = await productionCopy();
    const result = await signon("apps", "rewrite-uris", "--from", `*.${live}`, "--to", `*.staging.${live}`, "--json");
    expect(result.code).toBe(0);
    const publisherChanges = [
      { field: "redirect_uri", old: `https://publisher.${live}/auth/gds/callback`, new: `https://publisher.staging.${live}/auth/gds/callback` },
      { field: "home_uri", old: `https://publisher.${live}/`, new: `https://publisher.staging.${live}/` },
      { field: "push_base_url", old: `https://publisher.${live}/auth/gds/api`, new: `https://publisher.staging.${live}/auth/gds/api` },
    ];
    const whitehallChanges = [
      { field: "redirect_uri", old: `https://whitehall-admin.${live}/auth/gds/callback?from=signon`, new: `https://whitehall-admin.staging.${live}/auth/gds/callback?from=signon` },
    ];
    expect(JSON.parse(result.stdout)).toEqual({
      dry_run: false,
      from: `*.${live}`,
      to: `*.staging.${live}`,
      applications: [
        { name: "Publisher", changes: publisherChanges },
        { name: "Whitehall", changes: whitehallChanges },
      ],
      changed_applications: 2,
      changed_uris: 4,
    });
    expect(await storedUris()).toEqual([
      { name: "Elsewhere", redirectUris: ["https://elsewhere.example.org/auth/gds/callback"], homeUri: "https://elsewhere.example.org/", pushBaseUrl: null, postLogoutRedirectUris: [], backchannelLogoutUri: null },
      {
        name: "Publisher",
        redirectUris: [`https://publisher.staging.${live}/auth/gds/callback`, "https://publisher.example.net/auth/gds/callback"],
        homeUri: `https://publisher.staging.${live}/`,
        pushBaseUrl: `https://publisher.staging.${live}/auth/gds/api`,
        postLogoutRedirectUris: [],
        backchannelLogoutUri: null,
      },
      { name: "Whitehall", redirectUris: [`https://whitehall-admin.staging.${live}/auth/gds/callback?from=signon`], homeUri: null, pushBaseUrl: null, postLogoutRedirectUris: [], backchannelLogoutUri: null },
    ]);
    const events = await rewriteEvents();
    expect(events.map((event) => ({ applicationId: event.applicationId, actorUid: event.actorUid, details: event.details }))).toEqual([
      { applicationId: publisher.id, actorUid: null, details: { from_host: `*.${live}`, to_host: `*.staging.${live}`, changes: publisherChanges } },
      { applicationId: whitehall.id, actorUid: null, details: { from_host: `*.${live}`, to_host: `*.staging.${live}`, changes: whitehallChanges } },
    ]);

    // The staging hosts are under the live domain too: a second run would rewrite them again, and the dry run says so first.
    const again = await signon("apps", "rewrite-uris", "--from", `*.${live}`, "--to", `*.staging.${live}`, "--dry-run", "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ changed_uris: 4 });
    const nothing = await signon("apps", "rewrite-uris", "--from", "*.integration.example", "--to", "*.staging.example");
    expect(nothing).toEqual({ code: 0, stderr: "", stdout: "No application has a URI on *.integration.example; nothing to rewrite.\n" });
  });

  it("matches an exact host and port, may change the scheme, and rewrites OpenID Connect logout URIs too", async () => {
    const local = await createApp(ctx, {
      name: "Local",
      redirectUris: ["http://localhost:3000/auth/callback", "http://localhost:4000/auth/callback"],
      homeUri: "http://LOCALHOST:3000/",
    });
    await setOpenIdSettings(ctx, local.application, {
      scopes: ["openid"],
      idTokenAlg: "ES256",
      postLogoutRedirectUris: ["http://localhost:3000/signed-out"],
      backchannelLogoutUri: "http://localhost:3000/backchannel",
    }, { uid: null, origin: null });
    const result = await signon("apps", "rewrite-uris", "--from", "http://localhost:3000", "--to", "https://app.staging.example", "--json");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toMatchObject({ changed_applications: 1, changed_uris: 4 });
    expect(await storedUris()).toEqual([
      {
        name: "Local",
        redirectUris: ["https://app.staging.example/auth/callback", "http://localhost:4000/auth/callback"],
        homeUri: "https://app.staging.example/",
        pushBaseUrl: null,
        postLogoutRedirectUris: ["https://app.staging.example/signed-out"],
        backchannelLogoutUri: "https://app.staging.example/backchannel",
      },
    ]);
    // Without a port in --from, any port matches and is kept.
    await signon("apps", "rewrite-uris", "--from", "localhost", "--to", "127.0.0.1");
    expect((await storedUris())[0]?.redirectUris).toEqual(["https://app.staging.example/auth/callback", "http://127.0.0.1:4000/auth/callback"]);
  });

  it("refuses to run with NODE_ENV=production unless given --allow-production", async () => {
    await productionCopy();
    const before = await storedUris();
    const argv = ["apps", "rewrite-uris", "--from", `*.${live}`, "--to", `*.staging.${live}`];
    const production = { NODE_ENV: "production" };
    expect(await runBuiltSignonCli(database.url, argv, production)).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "signon: Refused: NODE_ENV is production. Rewriting every application's URIs is for a copy of another environment's database, such as staging made from production's; " +
        "run it where that copy is, or add --allow-production if this database really is the one to change\n",
    });
    expect((await runBuiltSignonCli(database.url, [...argv, "--dry-run"], production)).code).toBe(1);
    expect(await storedUris()).toEqual(before);
    expect(await rewriteEvents()).toEqual([]);

    const allowed = await runBuiltSignonCli(database.url, [...argv, "--allow-production"], production);
    expect(allowed).toMatchObject({ code: 0, stderr: "" });
    expect(allowed.stdout).toContain("Rewrote 4 URIs of 2 applications; each application's event log records its change.");
    expect(await rewriteEvents()).toHaveLength(2);
  });

  it("refuses a rewrite that leaves an application a URI it could not register, and changes nothing", async () => {
    await productionCopy();
    const before = await storedUris();
    const result = await signon("apps", "rewrite-uris", "--from", `https://publisher.${live}`, "--to", "http://publisher.staging.example");
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: [
        "signon: Nothing was rewritten: applications could not use the rewritten URIs.",
        "Publisher: the redirect URI would become http://publisher.staging.example/auth/gds/callback, which must use https",
        "Publisher: the home URI would become http://publisher.staging.example/, which must use https",
        "Publisher: the push base URL would become http://publisher.staging.example/auth/gds/api, which must use https",
        "",
      ].join("\n"),
    });
    expect(await storedUris()).toEqual(before);
    expect(await rewriteEvents()).toEqual([]);
  });

  it("answers a host pattern that is not one with a usage error (exit code 2)", async () => {
    const cases: [string, string, string][] = [
      ["publisher.example.org/auth", "staging.example.org", "--from publisher.example.org/auth is not a host: give the host alone (with a port if needed), no path, user name or spaces"],
      ["ftp://files.example.org", "staging.example.org", "--from ftp://files.example.org: the scheme is http or https, not ftp"],
      ["example.org:99999", "staging.example.org", "--from example.org:99999: a port is a number from 1 to 65535"],
      ["example.org:http", "staging.example.org", "--from example.org:http: a port is a number from 1 to 65535, after the host"],
      ["pub*.example.org", "staging.example.org", "--from pub*.example.org: a wildcard stands only at the start, as *.example.org"],
      ["*.", "*.staging.example.org", "--from *. is not a host name, IPv4 address or [IPv6] address"],
      ["bad-.example.org", "staging.example.org", "--from bad-.example.org is not a host name, IPv4 address or [IPv6] address"],
      ["*.10.0.0.1", "*.example.org", "--from *.10.0.0.1: a wildcard covers the hosts under a domain name, not an address"],
      ["publisher.example.org", "*.staging.example.org", "--to is *.domain only when --from is too: there are no labels to carry over from a single host"],
      ["Example.org", "example.org", "--from and --to are the same: there is nothing to rewrite"],
      ["", "example.org", "--from is empty: give a host, for example publisher.example.org or *.example.org"],
    ];
    for (const [from, to, message] of cases) {
      const result = await signonHere("apps", "rewrite-uris", "--from", from, "--to", to);
      expect({ code: result.code, stderr: result.stderr.split("\n")[0] }, `${from} → ${to}`).toEqual({ code: 2, stderr: message });
      expect(result.stderr).toContain("Usage: signon apps rewrite-uris --from HOST --to HOST [--dry-run] [--allow-production] [--json]");
    }
    const missing = await signonHere("apps", "rewrite-uris", "--from", "example.org");
    expect(missing).toMatchObject({ code: 2, stdout: "" });
    expect(missing.stderr).toMatch(/^--from and --to are required\n/);
  });
});
