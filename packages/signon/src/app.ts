import { fileURLToPath } from "node:url";
import cookie from "@fastify/cookie";
import csrf from "@fastify/csrf-protection";
import view from "@fastify/view";
import { answeringDatabaseOutages, HEALTH_CHECK_PATHS, lazySchemaCompilers, requestIdServerOptions, serviceLoggerOptions, type ServiceLoggerOptions } from "@tessera/service-kit";
import { createDrizzle, type ReadRouter } from "@tessera/db";
import { Eta } from "eta";
import type { FastifyInstance, FastifyServerOptions } from "fastify";
import type pg from "pg";
import { relyingParty } from "./accounts/passkeys/relying-party.js";
import type { SignonConfig } from "./config.js";
import { signonHttpsOptions, type SignonHttpsOptions } from "./https-options.js";
import type { SignonContext } from "./context.js";
import type { SignonDatabase } from "./db/database.js";
import * as schema from "./db/schema.js";
import { statementRunner } from "./db/statements.js";
import { followTokenAnswerChanges } from "./oauth/token-answer-changes.js";
import { TokenAnswerCache } from "./oauth/token-answer-cache.js";
import { handleError } from "./http/error-handler.js";
import { answerNotFound } from "./http/not-found.js";
import { redirectTrailingSlash } from "./http/trailing-slash.js";
import { answerFrameworkError } from "./http/framework-errors.js";
import { registerSecurityHeaders } from "./http/security-headers.js";
import { registerRecentWrites } from "./http/recent-write-cookie.js";
import { csrfCookie } from "./http/csrf-secret.js";
import { bodyLimitBytes, parseQueryString, registerFormParser, rejectMalformedQuery } from "./http/form-content-type.js";
import { InvalidRequestError } from "./oauth/errors.js";
import { registerOperations } from "./operations.js";
import { resolveSecretKey } from "./security/secret-box.js";
import { registerOverLongAnswers } from "./web/over-long-fields.js";
import authorizeRoutes from "./routes/oauth/authorize.js";
import introspectRoutes from "./routes/oauth/introspect.js";
import revokeRoutes from "./routes/oauth/revoke.js";
import devMailRoutes from "./routes/dev/mail.js";
import faviconRoutes from "./routes/favicon.js";
import homeRoutes from "./routes/home.js";
import assetRoutes from "./routes/assets.js";
import signInRoutes from "./routes/sign-in.js";
import passkeySignInRoutes from "./routes/sign-in-passkey.js";
import twoStepRoutes from "./routes/two-step/index.js";
import signOutRoutes from "./routes/sign-out.js";
import tokenRoutes from "./routes/token.js";
import userJsonRoutes from "./routes/user-json.js";
import metadataRoutes from "./routes/well-known/oauth-authorization-server.js";

declare module "fastify" {
  interface FastifyInstance {
    signon: SignonContext;
  }
}

/** What the Sign-on app needs: configuration, a database (drizzle and its pool) and (in tests) a clock. */
export interface SignonAppOptions {
  config: SignonConfig;
  db: SignonDatabase;
  pool: pg.Pool;
  now?: () => Date;
  /** Called after a request's change has committed pushes (wakes the delivery worker). */
  pushesQueued?: () => void;
  /** Called after a batch of invitations was stored (wakes the batch invitation worker). */
  invitationBatchesQueued?: () => void;
  /** Where access-token answers are kept (default: a cache of `config.tokenAnswerCacheSize`); tests pass one they can look into. */
  tokenAnswers?: TokenAnswerCache;
  /** Where reads that tolerate lag go (`DATABASE_READ_URL`); absent: the primary serves every read. */
  reads?: ReadRouter;
}

/**
 * Fastify server options for Sign-on: body limit, proxy trust, strict query
 * parsing, TLS (TLS 1.2 or later, forward-secret AEAD ciphers: see
 * `https-options.ts`), request ids, and JSON request logs without query strings
 * (they can carry `access_token`, which must never be logged; S11) and with
 * credentials redacted. `logger`: `true` for the default log on standard
 * output, `false` for none, or where and at which level to log.
 */
export function signonServerOptions(
  config: SignonConfig,
  logger: boolean | ServiceLoggerOptions = true,
): FastifyServerOptions & { https?: SignonHttpsOptions } {
  return {
    bodyLimit: bodyLimitBytes,
    // Only the proxy that connects to Sign-on is trusted: the client address is the one it adds last to
    // X-Forwarded-For, never one a client put in the header before it (S15).
    trustProxy: config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    // Parameters are strings; coercing a string into a one-element array would let schemas accept what they should not.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    // Each route's schemas are compiled at its first request, not all of them before the first start is ready.
    schemaController: lazySchemaCompilers(),
    routerOptions: { querystringParser: parseQueryString, maxParamLength: 200, ignoreTrailingSlash: false },
    frameworkErrors: answerFrameworkError,
    // Building the routes takes seconds on a loaded machine; Fastify's 10 s default would end a slow start.
    pluginTimeout: 120_000,
    ...requestIdServerOptions(),
    logger: logger === false ? false : serviceLoggerOptions(logger === true ? {} : logger),
    ...(config.tls ? { https: signonHttpsOptions(config.tls) } : {}),
  };
}

const viewsDirectory = fileURLToPath(new URL("./views/", import.meta.url));

/**
 * The Sign-on application as a Fastify plugin. `server.ts` registers it on an
 * instance built with `signonServerOptions` and listens; tests register it and
 * call `inject()`.
 */
export default async function signonApp(app: FastifyInstance, options: SignonAppOptions): Promise<void> {
  const { config } = options;
  const production = config.mode === "production";
  const tokenAnswers = options.tokenAnswers ?? new TokenAnswerCache(config.tokenAnswerCacheSize);
  if (config.tokenAnswerCacheSize > 0) {
    const follower = followTokenAnswerChanges(options.pool, tokenAnswers, app.log);
    app.addHook("onClose", () => follower.close());
  }
  const signon: SignonContext = {
    db: options.db,
    statements: statementRunner(options.pool, config.preparedStatements),
    config,
    tokenAnswers,
    now: options.now ?? (() => new Date()),
    pushesQueued: options.pushesQueued,
    invitationBatchesQueued: options.invitationBatchesQueued,
    secretKey: await resolveSecretKey(config.secretKey, config.dataDir),
  };
  const reads = options.reads;
  if (reads?.hasReplicas === true) {
    // One context per replica, made once; the primary's is the app's own.
    const onReplica = new Map<pg.Pool, SignonContext>();
    signon.forRead = (ownChange) => {
      const pool = reads.pool(ownChange === undefined ? {} : ownChange.after === null ? { primary: true } : { after: ownChange.after });
      if (pool === options.pool) return signon;
      let context = onReplica.get(pool);
      if (context === undefined) {
        context = { ...signon, db: createDrizzle(pool, schema), statements: statementRunner(pool, config.preparedStatements) };
        onReplica.set(pool, context);
      }
      return context;
    };
  }
  app.decorate("signon", signon);

  app.removeAllContentTypeParsers();
  registerFormParser(app);
  app.addContentTypeParser("application/json", { parseAs: "string", bodyLimit: bodyLimitBytes }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string) as unknown);
    } catch {
      done(new InvalidRequestError("The body is not valid JSON"), undefined);
    }
  });

  // Before any route: a route keeps the error handler set when it was added (health checks and metrics included).
  // While the database cannot be reached: 503 with Retry-After, as OAuth's `temporarily_unavailable` or a plain page.
  app.setErrorHandler(
    answeringDatabaseOutages(handleError, {
      json: () => ({ error: "temporarily_unavailable", error_description: "Sign-on cannot reach its database; try again shortly" }),
      html: (request) => request.routeOptions.config.errorFormat === "html",
    }),
  );
  registerOperations(app, { config, db: options.db, pool: options.pool, now: app.signon.now, reads: options.reads });
  app.addHook("onRequest", rejectMalformedQuery);
  if (production) {
    // S16: plain HTTP is refused (API) or redirected (browser GET).
    app.addHook("onRequest", async (request, reply) => {
      // Health probes come from the load balancer itself, often over plain HTTP; they carry and reveal nothing.
      if (request.protocol === "https" || HEALTH_CHECK_PATHS.includes(request.routeOptions.url ?? "")) return;
      if (request.method === "GET" && (request.headers.accept ?? "").includes("text/html")) {
        return reply.redirect(`${config.publicUrl}${request.url}`, 301);
      }
      return reply.code(403).send({ error: "invalid_request", error_description: "HTTPS is required" });
    });
  }

  registerSecurityHeaders(app, production);
  await app.register(cookie);
  if (reads !== undefined && signon.forRead) registerRecentWrites(app, config, reads);
  await app.register(csrf, {
    cookieKey: csrfCookie.name(config),
    cookieOpts: csrfCookie.attributes(config),
    getToken: (request) => (request.body as { _csrf?: unknown } | undefined)?._csrf as string,
  });
  await app.register(view, {
    engine: { eta: new Eta() },
    root: viewsDirectory,
    layout: "layout.eta",
    // passkeyOrigin: the only origin passkey ceremonies work at, which the pages' script checks the page against.
    defaultContext: { serviceName: "Tessera Sign-on", passkeyOrigin: relyingParty(config).origin },
    // Templates compiled once, in development mode too (the default there compiles each on every request).
    production: true,
  });

  app.decorateRequest("webSession", null);
  // Before the routes: it adjusts each form route with `config.overLong` as it is added.
  registerOverLongAnswers(app);
  app.setNotFoundHandler(answerNotFound);
  redirectTrailingSlash(app);

  await app.register(faviconRoutes);
  await app.register(homeRoutes);
  await app.register(assetRoutes);
  await app.register(signInRoutes);
  await app.register(passkeySignInRoutes);
  await app.register(import("./routes/sign-in-upstream/index.js"));
  await app.register(twoStepRoutes);
  await app.register(signOutRoutes);
  await app.register(import("./routes/account/index.js"));
  await app.register(import("./routes/account/email.js"));
  await app.register(import("./routes/account/give-up-access.js"));
  await app.register(import("./routes/account/passkeys.js"));
  await app.register(import("./routes/invitations/index.js"));
  await app.register(import("./routes/password-reset/index.js"));
  await app.register(import("./routes/unlock/index.js"));
  await app.register(authorizeRoutes);
  await app.register(tokenRoutes);
  await app.register(userJsonRoutes);
  await app.register(revokeRoutes);
  await app.register(introspectRoutes);
  await app.register(metadataRoutes);
  await app.register(import("./routes/oidc/index.js"));
  await app.register(import("./routes/oidc/end-session.js"));
  await app.register(devMailRoutes);
  await app.register(import("./routes/users/index.js"));
  await app.register(import("./routes/applications/index.js"));
  await app.register(import("./routes/api-users/index.js"));
  await app.register(import("./routes/organisations/index.js"));
}
