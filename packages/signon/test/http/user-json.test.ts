import { describe, expect, it } from "vitest";
import { revokePermissions } from "../../src/applications/permissions.js";
import { suspendUser } from "../../src/accounts/manage-users.js";
import { createApp, createUser } from "../support/factories.js";
import { exchangeCode, getUserJson, obtainCode } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();

const invalidToken = { error: "invalid_token", error_description: "The access token is not valid" };
const bearerChallenge = 'Bearer realm="signon", error="invalid_token"';

async function signedInUser() {
  const client = await createApp(signon.ctx, { name: "Publisher", permissions: ["admin"] });
  await createApp(signon.ctx, { name: "Other", permissions: ["admin"] });
  const user = await createUser(signon.ctx, { name: "Grace Hopper", permissions: { Publisher: ["signin", "admin"], Other: ["signin"] } });
  const { code } = await obtainCode(signon.app, client, user.email);
  const { access_token } = (await exchangeCode(signon.app, client, code)).json<{ access_token: string }>();
  return { client, user, accessToken: access_token };
}

describe("GET /user.json", () => {
  it("returns the user with this application's permissions only, sorted (S11, S12)", async () => {
    const { user, accessToken } = await signedInUser();
    const response = await getUserJson(signon.app, accessToken);
    expect(response.statusCode).toBe(200);
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.json()).toEqual({
      user: {
        uid: user.uid,
        name: "Grace Hopper",
        email: user.email,
        permissions: ["admin", "signin"],
        organisation_slug: null,
        organisation_content_id: null,
        disabled: false,
      },
    });
  });

  it("shows the user's organisation", async () => {
    const { createOrganisation } = await import("../../src/accounts/organisations.js");
    const organisation = await createOrganisation(signon.ctx, { slug: "cabinet-office", name: "Cabinet Office" });
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const user = await createUser(signon.ctx, { organisationId: organisation.id, permissions: { Publisher: ["signin"] } });
    const { code } = await obtainCode(signon.app, client, user.email);
    const { access_token } = (await exchangeCode(signon.app, client, code)).json<{ access_token: string }>();
    expect((await getUserJson(signon.app, access_token)).json()).toMatchObject({
      user: { organisation_slug: "cabinet-office", organisation_content_id: organisation.contentId },
    });
  });

  it("accepts a token issued in advance to an API user until it expires (S17)", async () => {
    const { createApiUser } = await import("../../src/accounts/manage-users.js");
    const { grantPermissions } = await import("../../src/applications/permissions.js");
    const { issueOperatorToken } = await import("../../src/oauth/issue-operator-token.js");
    await createApp(signon.ctx, { name: "Completion", permissions: ["staff"] });
    const apiUser = await createApiUser(signon.ctx, { email: "reporting@example.org", name: "Reporting" });
    await grantPermissions(signon.ctx, { email: apiUser.email, application: "Completion", permissions: ["signin", "staff"] });
    const { accessToken } = await issueOperatorToken(signon.ctx, { email: apiUser.email, application: "Completion", expiresInSeconds: 86_400 });

    const response = await getUserJson(signon.app, accessToken);
    expect(response.json()).toEqual({
      user: { uid: apiUser.uid, name: "Reporting", email: "reporting@example.org", permissions: ["signin", "staff"], organisation_slug: null, organisation_content_id: null, disabled: false },
    });
    signon.clock.advance(86_400);
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(401);
  });

  it("accepts the token as the access_token query parameter (RFC 6750 §2.3)", async () => {
    const { accessToken, client } = await signedInUser();
    const response = await signon.app.inject({ method: "GET", url: `/user.json?access_token=${accessToken}&client_id=${client.clientId}` });
    expect(response.statusCode).toBe(200);
  });

  it("refuses a token after 7200 seconds", async () => {
    const { accessToken } = await signedInUser();
    signon.clock.advance(7199);
    expect((await getUserJson(signon.app, accessToken)).statusCode).toBe(200);
    signon.clock.advance(1);
    const expired = await getUserJson(signon.app, accessToken);
    expect(expired.statusCode).toBe(401);
    expect(expired.headers["www-authenticate"]).toBe(bearerChallenge);
    expect(expired.json()).toEqual(invalidToken);
  });

  it("refuses the token of a user who lost signin, or was suspended", async () => {
    const first = await signedInUser();
    await revokePermissions(signon.ctx, { email: first.user.email, application: "Publisher", permissions: ["signin"] });
    expect((await getUserJson(signon.app, first.accessToken)).statusCode).toBe(401);

    await database.reset();
    const second = await signedInUser();
    await suspendUser(signon.ctx, second.user.email, "Left");
    expect((await getUserJson(signon.app, second.accessToken)).json()).toEqual(invalidToken);
  });

  it("refuses a client_id that is not the token's application", async () => {
    const { accessToken } = await signedInUser();
    const response = await signon.app.inject({
      method: "GET",
      url: `/user.json?client_id=someone-else`,
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(response.statusCode).toBe(401);
  });

  it.each([
    ["no token", {}, "", 401, { error: "invalid_token", error_description: "An access token is required" }],
    ["an unknown token", { authorization: `Bearer ${"0".repeat(64)}` }, "", 401, invalidToken],
    ["a malformed Authorization header", { authorization: "Bearer" }, "", 401, { error: "invalid_token", error_description: "Malformed Authorization header" }],
    ["a Basic header", { authorization: "Basic YTpi" }, "", 401, { error: "invalid_token", error_description: "Malformed Authorization header" }],
    ["the token sent two ways", { authorization: `Bearer ${"0".repeat(64)}` }, `?access_token=${"0".repeat(64)}`, 400, { error: "invalid_request", error_description: "Send the access token one way only" }],
    ["a repeated access_token", {}, "?access_token=a&access_token=b", 400, { error: "invalid_request", error_description: "access_token is repeated" }],
    ["an oversized access_token", {}, `?access_token=${"a".repeat(600)}`, 400, { error: "invalid_request", error_description: "Invalid or repeated parameter: access_token" }],
    ["invalid UTF-8 in the query", {}, "?access_token=%FF", 400, { error: "invalid_request", error_description: "The query string has a malformed percent-escape or invalid UTF-8" }],
  ])("answers %s with status $3", async (_name, headers, query, status, body) => {
    const response = await signon.app.inject({ method: "GET", url: `/user.json${query}`, headers });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toEqual(body);
    if (status === 401) expect(response.headers["www-authenticate"]).toBe(bearerChallenge);
  });
});
