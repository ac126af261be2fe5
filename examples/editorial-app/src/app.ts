import { OutageTracker, startDatabase } from "@tessera/db";
import { signonClientPlugin } from "@tessera/signon-client/fastify";
import { PostgresSessionStore, PostgresUserStore, signonClientMigrations } from "@tessera/signon-client/postgres";
import { answeringDatabaseOutages, databaseReadinessChecks, registerHealthChecks } from "@tessera/service-kit";
import type { FastifyInstance } from "fastify";
import type { EditorialAppConfig } from "./config.js";
import { adminRoutes } from "./routes/admin.js";
import { apiMeRoutes } from "./routes/api/me.js";
import { assetRoutes } from "./routes/assets.js";
import { forbiddenPage } from "./routes/forbidden.js";
import { homeRoutes } from "./routes/home.js";
import { answerNotFound } from "./routes/not-found.js";

export type { EditorialAppConfig } from "./config.js";

/** How often expired sessions are removed from the database, by default. */
const SESSION_SWEEP_MS = 10 * 60 * 1000;

/**
 * The editorial application as a Fastify plugin: opens (and migrates) its
 * database, makes itself a Sign-on client, and serves
 *
 * - `GET /`: who you are and your permissions (signed in),
 * - `GET /admin`: the users Sign-on told it about (permission `admin`),
 * - `GET /api/me`: the caller of a Sign-on bearer token,
 * - `GET /assets/editorial.css`: its stylesheet,
 * - `GET /healthcheck/live`, `GET /healthcheck/ready` (its database answers, its tables are migrated),
 * - a 404 for any other address: a page for a browser, JSON for an API caller,
 * - the Sign-on routes: `/auth/gds`, `/auth/gds/callback`, `/auth/gds/sign_out`,
 *   and the push receivers `PUT /auth/gds/api/users/:uid`, `POST /auth/gds/api/users/:uid/reauth`.
 */
export default async function editorialApp(app: FastifyInstance, options: { config: EditorialAppConfig }) {
  const { config } = options;
  const database = await startDatabase({
    url: config.database.url,
    dataDir: config.database.dataDir,
    log: { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message) },
    migrations: [signonClientMigrations],
    ...(config.database.statementTimeoutSeconds === undefined ? {} : { statementTimeoutMs: config.database.statementTimeoutSeconds * 1000 }),
    waitWhileUnavailable: config.database.waitWhileUnavailable ?? false,
  });
  const sessionStore = new PostgresSessionStore(database.pool);
  // During a database outage: one line when the sweeps start failing and one when they work again, not one per sweep.
  const sweepOutage = new OutageTracker("session sweep", { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message) });
  const sweep = setInterval(() => {
    sessionStore.deleteExpired(Date.now()).then(
      () => sweepOutage.succeeded(),
      (error: unknown) => {
        if (!sweepOutage.failed(error)) app.log.warn({ err: error }, "could not remove expired sessions");
      },
    );
  }, config.sessionSweepMs ?? SESSION_SWEEP_MS);
  sweep.unref();
  app.addHook("onClose", async () => {
    clearInterval(sweep);
    await database.close();
  });

  // While its database cannot be reached: 503 with Retry-After, a plain page for browsers, JSON for the API; everything else as before.
  app.setErrorHandler(
    answeringDatabaseOutages(app.errorHandler, {
      json: () => ({ error: "temporarily_unavailable", error_description: "The editorial app cannot reach its database; try again shortly." }),
      html: (request) => (request.headers.accept ?? "").includes("text/html"),
    }),
  );
  await app.register(signonClientPlugin, {
    signonUrl: config.signonUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: config.redirectUri,
    userStore: new PostgresUserStore(database.pool),
    sessionStore,
    cookieName: "editorial_session",
    onForbidden: forbiddenPage(config.signonUrl),
    ...(config.mockUser === undefined ? {} : { mockUser: config.mockUser, nodeEnv: config.nodeEnv }),
  });
  app.get("/healthz", async () => ({ status: "ok" }));
  registerHealthChecks(app, {
    checks: databaseReadinessChecks(async (text) => (await database.pool.query<Record<string, unknown>>(text)).rows, [signonClientMigrations]),
  });
  await app.register(assetRoutes);
  await app.register(homeRoutes);
  await app.register(adminRoutes(database.pool));
  await app.register(apiMeRoutes);
  // An unknown address: an HTML page for a browser, JSON for an API caller.
  app.setNotFoundHandler(answerNotFound);
}
