import Fastify from "fastify";
import { MemorySessionStore, MemoryUserStore } from "@tessera/signon-client";
import { signonClientPlugin } from "@tessera/signon-client/fastify";

export async function buildApp(signonUrl: string, clientSecret: string) {
  const app = Fastify();
  await app.register(signonClientPlugin, {
    signonUrl, // e.g. https://signon.example.org
    clientId: "editorial",
    clientSecret,
    redirectUri: "https://editorial.example.org/auth/gds/callback",
    userStore: new MemoryUserStore(), // or new PostgresUserStore(pool)
    sessionStore: new MemorySessionStore(), // or new PostgresSessionStore(pool)
  });
  const { requireSignIn, requirePermission, requireBearerToken } = app.signonClient;

  app.get("/", { preHandler: requireSignIn }, (request) => `Hello, ${request.signonUser?.name}`);
  app.get("/admin", { preHandler: requirePermission("admin") }, () => "Admin area");
  app.get("/api/me", { onRequest: requireBearerToken() }, (request) => request.signonApiUser);
  return app;
}
