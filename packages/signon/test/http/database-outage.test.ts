import { beforeAll, describe, expect, it } from "vitest";
import { createApp, createUser } from "../support/factories.js";
import { authorizeUrl, exchangeCode, getUserJson, obtainCode, postForm } from "../support/flow.js";
import { signonBehindFaultProxy, unavailable } from "../support/signon-behind-proxy.js";

// Sign-on on a pool that reaches its database through a proxy, which refuses connections as while PostgreSQL restarts.
const { app, direct, proxy } = await signonBehindFaultProxy();

describe("Sign-on while its database refuses connections", () => {
  let client: Awaited<ReturnType<typeof createApp>>;
  let accessToken: string;
  let code: string;

  beforeAll(async () => {
    client = await createApp(direct.ctx, { name: "Outage" });
    const user = await createUser(direct.ctx, { permissions: { Outage: ["signin"] } });
    const first = await obtainCode(app, client, user.email);
    accessToken = (await exchangeCode(app, client, first.code)).json<{ access_token: string }>().access_token;
    code = (await obtainCode(app, client, user.email)).code;
    proxy.cutAll();
    await proxy.refuse();
  });

  it("answers POST /token 503 temporarily_unavailable with Retry-After", async () => {
    const response = await exchangeCode(app, client, code);
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.json()).toEqual(unavailable);
  });

  it("answers GET /user.json 503 in the same shape", async () => {
    const response = await getUserJson(app, accessToken);
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual(unavailable);
  });

  it("answers the introspection endpoint 503 in the same shape", async () => {
    const response = await postForm(app, "/oauth/introspect", { token: accessToken, client_id: client.clientId, client_secret: client.clientSecret });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual(unavailable);
  });

  it("answers a browser page 503 with a plain temporarily-unavailable page", async () => {
    const response = await app.inject({ method: "GET", url: authorizeUrl({ response_type: "code", client_id: client.clientId, redirect_uri: client.redirectUri, state: "s" }) });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(response.body).toContain("Temporarily unavailable");
  });

  it("answers /healthcheck/ready 503 naming the database and /healthcheck/live 200", async () => {
    const ready = await app.inject({ method: "GET", url: "/healthcheck/ready" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: "unavailable", failed: ["database", "migrations"], checks: { database: { status: "failed", reason: "database unavailable" } } });
    expect((await app.inject({ method: "GET", url: "/healthcheck/live" })).statusCode).toBe(200);
  });

  describe("and once it accepts them again", () => {
    beforeAll(() => proxy.accept());

    it("exchanges the code it could not exchange before, without a restart", async () => {
      expect((await app.inject({ method: "GET", url: "/healthcheck/ready" })).statusCode).toBe(200);
      const response = await exchangeCode(app, client, code);
      expect(response.statusCode).toBe(200);
      expect((await getUserJson(app, response.json<{ access_token: string }>().access_token)).statusCode).toBe(200);
    });
  });
});
