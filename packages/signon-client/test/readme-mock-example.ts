import Fastify from "fastify";
import { MemorySessionStore, MemoryUserStore } from "@tessera/signon-client";
import { signonClientPlugin } from "@tessera/signon-client/fastify";

export async function buildAppWithoutSignon() {
  const app = Fastify();
  await app.register(signonClientPlugin, {
    signonUrl: "http://localhost:3000", // never called in mock mode
    clientId: "editorial",
    clientSecret: "unused",
    redirectUri: "http://localhost:3002/auth/gds/callback",
    userStore: new MemoryUserStore(),
    sessionStore: new MemorySessionStore(),
    mockUser: { uid: "dev-1", name: "Dev Eloper", email: "dev@example.org", permissions: ["editor"] },
  });
  const { requireSignIn, requirePermission, requireBearerToken } = app.signonClient;

  app.get("/", { preHandler: requireSignIn }, (request) => `Hello, ${request.signonUser?.name}`);
  app.get("/admin", { preHandler: requirePermission("admin") }, () => "Admin area");
  app.get("/api/me", { onRequest: requireBearerToken(["editor"]) }, (request) => request.signonApiUser?.email);
  return app;
}
