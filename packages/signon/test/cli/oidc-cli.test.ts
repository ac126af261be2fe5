import { isNull } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { signingKeys } from "../../src/db/schema.js";
import { runSignonCli } from "../support/cli.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
afterAll(() => database.close());
beforeEach(() => database.reset());

const secretKey = { SIGNON_SECRET_KEY: "5e".repeat(32) };
const signon = (...argv: string[]) => runSignonCli(database.url, argv, secretKey);

describe("signon apps create and apps oidc", () => {
  it("registers an OpenID Connect client with its scopes, algorithm and logout URIs, and changes them", async () => {
    const created = await signon(
      "apps", "create", "--name", "Wiki", "--redirect-uri", "https://wiki.example/oidc/callback",
      "--oidc-scopes", "openid,email", "--id-token-alg", "RS256",
      "--post-logout-redirect-uri", "https://wiki.example/", "--backchannel-logout-uri", "https://wiki.example/oidc/logout", "--json",
    );
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(created.stdout)).toMatchObject({
      name: "Wiki",
      oidc_scopes: ["openid", "email"],
      id_token_signed_response_alg: "RS256",
      post_logout_redirect_uris: ["https://wiki.example/"],
      backchannel_logout_uri: "https://wiki.example/oidc/logout",
    });
    const changed = await signon("apps", "oidc", "--app", "Wiki", "--oidc-scopes", "openid,profile,email", "--no-backchannel-logout", "--json");
    expect(JSON.parse(changed.stdout)).toMatchObject({ oidc_scopes: ["openid", "profile", "email"], backchannel_logout_uri: null });
    const off = await signon("apps", "oidc", "--app", "Wiki", "--no-oidc", "--json");
    expect(JSON.parse(off.stdout)).toMatchObject({ oidc_scopes: [] });
  });

  it("refuses an unknown scope, an unsupported algorithm and a non-https logout URI, and registers nothing", async () => {
    for (const options of [["--oidc-scopes", "openid,offline_access"], ["--id-token-alg", "HS256"], ["--backchannel-logout-uri", "http://wiki.example/logout"]]) {
      const refused = await signon("apps", "create", "--name", "Wiki", "--redirect-uri", "https://wiki.example/cb", ...options);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^signon: /);
    }
    expect((await signon("apps", "oidc", "--app", "Wiki")).code).toBe(1);
  });
});

describe("signon keys rotate", () => {
  it("replaces the live keys and keeps the old ones published until their tokens have expired", async () => {
    const first = JSON.parse((await signon("keys", "rotate", "--json")).stdout) as { keys: { kid: string; alg: string }[] };
    const second = JSON.parse((await signon("keys", "rotate", "--json")).stdout) as { keys: { kid: string; alg: string }[] };
    expect(second.keys.map((key) => key.alg).sort()).toEqual(["ES256", "RS256"]);
    const live = await database.db.select({ kid: signingKeys.kid }).from(signingKeys).where(isNull(signingKeys.retiredAt));
    expect(live.map((row) => row.kid).sort()).toEqual(second.keys.map((key) => key.kid).sort());
    const retired = await database.db.select().from(signingKeys);
    for (const key of first.keys) {
      const row = retired.find((candidate) => candidate.kid === key.kid);
      expect(row?.publishUntil?.getTime()).toBe((row?.retiredAt?.getTime() ?? 0) + 3960 * 1000);
      expect(row?.sealedPrivateJwk).toMatch(/^v1\./);
    }
  });
});
