import { useTestDatabase } from "@tessera/db/testing";
export { freePort } from "@tessera/db/testing";
import { signonClientMigrations } from "@tessera/signon-client/postgres";
import { startShipped } from "@tessera/test-support";
import Fastify, { type FastifyInstance } from "fastify";
import editorialApp from "../../src/app.js";
import type { EditorialAppConfig } from "../../src/config.js";

/** A migrated test database for the editorial application's tables. */
export function editorialTestDatabase() {
  return useTestDatabase({ migrations: [signonClientMigrations], label: "editorial_app" });
}

/** Starts the editorial application on 127.0.0.1:`port` with `config`; returns it and its origin. */
export async function listenEditorialApp(
  config: EditorialAppConfig,
  port: number,
): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify({ logger: false });
  await app.register(editorialApp, { config });
  const url = await app.listen({ host: "127.0.0.1", port });
  return { app, url };
}

/**
 * Starts the editorial application as shipped (its built entry point in a process of its own, configured
 * from the environment) on 127.0.0.1:`port`, registered as `registration` says; returns its origin.
 */
export async function startShippedEditorialApp(
  registration: Omit<EditorialAppConfig, "database">,
  databaseUrl: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const service = await startShipped("editorial", {
    port,
    env: {
      DATABASE_URL: databaseUrl,
      SIGNON_URL: registration.signonUrl,
      EDITORIAL_APP_URL: new URL(registration.redirectUri).origin,
      EDITORIAL_APP_CLIENT_ID: registration.clientId,
      EDITORIAL_APP_CLIENT_SECRET: registration.clientSecret,
    },
  });
  return { url: service.url, close: () => service.stop() };
}

/** What registers an application in Sign-on: its origin and its CLI. */
export interface SignonWithCli {
  url: string;
  cli(...args: string[]): Promise<Record<string, unknown>>;
}

/**
 * Registers the editorial application in Sign-on as "Editorial" (permission
 * `admin`), with its callback and push receivers on 127.0.0.1:`appPort`;
 * returns the configuration it then starts with, less the database.
 */
export async function registerEditorialApp(signon: SignonWithCli, appPort: number): Promise<Omit<EditorialAppConfig, "database">> {
  const redirectUri = `http://127.0.0.1:${appPort}/auth/gds/callback`;
  const registered = await signon.cli(
    "apps", "create", "--name", "Editorial", "--redirect-uri", redirectUri,
    "--push-base", `http://127.0.0.1:${appPort}/auth/gds/api`, "--permissions", "admin",
  );
  return { signonUrl: signon.url, clientId: String(registered["client_id"]), clientSecret: String(registered["client_secret"]), redirectUri };
}
