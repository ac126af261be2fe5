import { readFile } from "node:fs/promises";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createBearerTokenVerifier, MemorySessionStore, MemoryUserStore, type SignonMockUser } from "../src/index.js";
import { signonBearerPlugin, signonClientPlugin, type SignonPluginOptions } from "../src/fastify/index.js";
import { buildAppWithoutSignon } from "./readme-mock-example.js";

const mockUser: SignonMockUser = { uid: "dev-1", name: "Dev Eloper", email: "dev@example.org", permissions: ["editor"] };
/** Where Sign-on would be: nothing listens there, and any call to it fails the test. */
const noSignon = "http://127.0.0.1:9";
const refusingFetch = async (): Promise<Response> => {
  throw new Error("mock mode called Sign-on");
};

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function fullApp(options: Partial<SignonPluginOptions> = {}) {
  const built = Fastify();
  await built.register(signonClientPlugin, {
    signonUrl: noSignon,
    clientId: "editorial",
    clientSecret: "unused",
    redirectUri: "http://localhost:3002/auth/gds/callback",
    userStore: new MemoryUserStore(),
    sessionStore: new MemorySessionStore(),
    fetch: refusingFetch,
    mockUser,
    nodeEnv: "development",
    ...options,
  });
  built.get("/", { preHandler: built.signonClient.requireSignIn }, (request) => request.signonUser);
  built.get("/editors", { preHandler: built.signonClient.requirePermission("editor") }, () => "editors only");
  built.get("/admin", { preHandler: built.signonClient.requirePermission("admin") }, () => "admins only");
  built.get("/api/me", { onRequest: built.signonClient.requireBearerToken() }, (request) => request.signonApiUser);
  built.get("/api/admin", { onRequest: built.signonClient.requireBearerToken(["admin"]) }, () => "admins only");
  return built;
}

describe("mock mode (mockUser)", () => {
  it("README: its example runs as shown, without Sign-on", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const example = await readFile(new URL("./readme-mock-example.ts", import.meta.url), "utf8");
    expect(readme).toContain(`\`\`\`ts\n${example}\`\`\``);

    app = await buildAppWithoutSignon();
    expect((await app.inject("/")).body).toBe("Hello, Dev Eloper");
    expect((await app.inject("/admin")).statusCode).toBe(403);
    expect((await app.inject("/api/me")).body).toBe("dev@example.org");
  });

  it("signs every browser request in as the stand-in, with signin added to its permissions, and checks them", async () => {
    app = await fullApp();

    const home = await app.inject("/");
    expect(home.statusCode).toBe(200);
    expect(home.json()).toEqual({
      uid: "dev-1",
      name: "Dev Eloper",
      email: "dev@example.org",
      permissions: ["editor", "signin"],
      organisationSlug: null,
      organisationContentId: null,
      disabled: false,
      remotelySignedOut: false,
    });
    expect((await app.inject("/editors")).body).toBe("editors only");
    expect((await app.inject("/admin")).statusCode).toBe(403);
  });

  it("signs every API request in as the stand-in, with any token or none, and checks the permissions", async () => {
    app = await fullApp();

    for (const headers of [{}, { authorization: "Bearer anything" }, { authorization: "Bearer" }]) {
      const response = await app.inject({ url: "/api/me", headers });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ uid: "dev-1", email: "dev@example.org", permissions: ["editor", "signin"] });
    }
    const forbidden = await app.inject({ url: "/api/admin", headers: { authorization: "Bearer anything" } });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ error: "insufficient_scope" });
  });

  it("signs in, back from the callback and out without Sign-on", async () => {
    app = await fullApp();

    const signIn = await app.inject("/auth/gds?return_to=/editors");
    expect([signIn.statusCode, signIn.headers.location]).toEqual([302, "/editors"]);
    const offSite = await app.inject("/auth/gds?return_to=//evil.example/");
    expect(offSite.headers.location).toBe("/");
    const callback = await app.inject("/auth/gds/callback?code=x&state=y");
    expect([callback.statusCode, callback.headers.location]).toEqual([302, "/"]);
    const signOut = await app.inject("/auth/gds/sign_out");
    expect([signOut.statusCode, signOut.headers.location]).toEqual([302, "/"]);
  });

  it("works for an API-only service (signonBearerPlugin) and a verifier of its own", async () => {
    app = Fastify();
    await app.register(signonBearerPlugin, { signonUrl: noSignon, clientId: "reports", fetch: refusingFetch, mockUser, nodeEnv: "test" });
    app.get("/reports", { onRequest: app.signonBearer.requireBearerToken(["editor"]) }, (request) => request.signonApiUser?.uid);
    expect((await app.inject("/reports")).body).toBe("dev-1");

    const verifier = createBearerTokenVerifier({ signonUrl: noSignon, clientId: "reports", fetch: refusingFetch, mockUser, nodeEnv: "test" });
    expect(await verifier.verify("any token")).toMatchObject({ uid: "dev-1" });
  });

  it("is refused at start-up when NODE_ENV is production, naming the option", async () => {
    const message = "mockUser must not be set when NODE_ENV is production: it signs every request in without Sign-on";
    await expect(fullApp({ nodeEnv: "production" })).rejects.toThrow(message);
    expect(() => createBearerTokenVerifier({ signonUrl: noSignon, clientId: "reports", mockUser, nodeEnv: "production" })).toThrow(message);
    const bearerOnly = Fastify();
    await expect(bearerOnly.register(signonBearerPlugin, { signonUrl: noSignon, clientId: "reports", mockUser, nodeEnv: "production" })).rejects.toThrow(message);
    await bearerOnly.close();
  });

  it("reads NODE_ENV from the environment by default", async () => {
    const before = process.env["NODE_ENV"];
    process.env["NODE_ENV"] = "production";
    try {
      expect(() => createBearerTokenVerifier({ signonUrl: noSignon, clientId: "reports", mockUser })).toThrow(/^mockUser must not be set when NODE_ENV is production/);
    } finally {
      if (before === undefined) delete process.env["NODE_ENV"];
      else process.env["NODE_ENV"] = before;
    }
  });

  it("refuses a stand-in without a uid, name or e-mail address, or with permissions that are not names", () => {
    const verifier = (user: unknown) => () => createBearerTokenVerifier({ signonUrl: noSignon, clientId: "reports", mockUser: user as SignonMockUser, nodeEnv: "test" });
    expect(verifier({ ...mockUser, uid: "" })).toThrow("mockUser.uid is required");
    expect(verifier({ ...mockUser, email: undefined })).toThrow("mockUser.email is required");
    expect(verifier({ ...mockUser, permissions: "admin" })).toThrow("mockUser.permissions must be a list of permission names");
  });

  it("without mockUser, asks Sign-on as before", async () => {
    app = await fullApp({ mockUser: undefined });
    const signIn = await app.inject("/auth/gds");
    expect(signIn.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:9\/oauth\/authorize\?/);
    expect((await app.inject("/api/me")).statusCode).toBe(401);
  });
});
