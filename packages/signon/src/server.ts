import { pathToFileURL } from "node:url";
import Fastify, { type FastifyInstance } from "fastify";
import { answerWhileStarting, drainAndClose } from "@tessera/service-kit";
import { DatabaseStartError, isDatabaseUnavailable } from "@tessera/db";
import signonApp, { signonServerOptions } from "./app.js";
import { ConfigError, loadConfig, type SignonConfig } from "./config.js";
import type { SignonContext } from "./context.js";
import { openSignonDatabase } from "./database.js";
import { statementRunner } from "./db/statements.js";
import { startInactivityJob } from "./accounts/inactivity.js";
import { startTokenRenewalJob } from "./accounts/token-renewal.js";
import { resolveSecretKey } from "./security/secret-box.js";
import { startInvitationBatchWorker, type InvitationBatchWorker } from "./accounts/invitation-batch-worker.js";
import { settleBackgroundWork } from "./background-work.js";
import { startExpiredRecordsJob } from "./maintenance/expired-records-job.js";
import { PushDeliveryService } from "./pushes/delivery-service.js";
import { countPeople } from "./repositories/users.js";
import { ensureSigningKeys, rotateSigningKeysIfDue } from "./oidc/signing-keys.js";
import { logoutRequestBuilder } from "./oidc/logout-token.js";
import { startHourlyJob } from "./maintenance/hourly-job.js";
import { startOrganisationRegisterJob } from "./accounts/organisation-register/register-job.js";

/** A running Sign-on server. */
export interface RunningSignon {
  app: FastifyInstance;
  config: SignonConfig;
  /** The address it listens on. */
  url: string;
  /** The push delivery worker, or `null` when `SIGNON_PUSH_DELIVERY=false`. */
  pushes: PushDeliveryService | null;
  /**
   * Stops accepting requests and delivering pushes, lets running requests finish, then closes the database. With
   * `drain` (SIGTERM), requests that still arrive on kept-alive connections are answered too (`drainAndClose`).
   */
  close(options?: { drain?: boolean }): Promise<void>;
}

/**
 * Starts Sign-on: reads the configuration from `env`, opens and migrates the
 * database, starts the push delivery worker (unless `SIGNON_PUSH_DELIVERY=false`)
 * and the hourly inactivity and expired-records jobs (and the organisation register's, when one is configured), and listens. On a database without accounts it prints how to create the
 * first administrator. `options.fetch` sends the pushes and fetches the organisation register (default: global `fetch`);
 * `options.inactivityFirstRunMs` moves the inactivity job's first run (default a minute after start).
 */
export async function startSignon(
  env: Record<string, string | undefined> = process.env,
  options: { logger?: boolean; fetch?: typeof fetch; inactivityFirstRunMs?: number } = {},
): Promise<RunningSignon> {
  const config = loadConfig(env);
  const serverOptions = signonServerOptions(config, options.logger ?? true);
  const app = Fastify(serverOptions);
  // Live but not ready until it listens itself, so that a supervisor does not restart it while it waits; over the
  // same TLS as the service, so that a probe over HTTPS finds it live.
  const starting = await answerWhileStarting(config.host, config.port, serverOptions.https);
  // Started before its database (or during a restart), it waits for it, logging once, instead of exiting.
  const database = await openSignonDatabase(config, app.log, { waitWhileUnavailable: true }).catch(async (error: unknown) => {
    await starting.release();
    throw error;
  });
  let pushes: PushDeliveryService | null = null;
  let batches: InvitationBatchWorker | null = null;
  // What the background work of this process (push delivery, the inactivity job) runs with.
  const ctx: SignonContext = { db: database.db, statements: statementRunner(database.pool, config.preparedStatements), config, now: () => new Date() };
  try {
    if (config.pushes.deliver) {
      pushes = new PushDeliveryService(
        ctx,
        {
          concurrency: config.pushes.concurrency,
          requestTimeoutMs: config.pushes.requestTimeoutMs,
          pollIntervalMs: config.pushes.pollIntervalMs,
          retryBaseMs: config.pushes.retryBaseMs,
          log: {
            warn: (message, fields) => app.log.warn({ push: fields }, message),
            error: (message, fields) => app.log.error({ push: fields }, message),
            info: (message) => app.log.info(message),
          },
          ...(options.fetch ? { fetch: options.fetch } : {}),
          // OpenID Connect back-channel logout tokens, signed with the keys sealed under the secret key.
          logoutRequest: logoutRequestBuilder({ ...ctx, secretKey: await resolveSecretKey(config.secretKey, config.dataDir) }),
        },
      );
    }
    const worker = pushes;
    // OpenID Connect signing keys: generated on the first start, sealed under the secret key.
    const keysCtx: SignonContext = { ...ctx, secretKey: await resolveSecretKey(config.secretKey, config.dataDir) };
    await ensureSigningKeys(keysCtx);
    // Invites the rows of uploaded batches; a batch interrupted by a restart resumes shortly after start.
    batches = startInvitationBatchWorker(ctx, { log: { error: (details, message) => app.log.error(details, message) } });
    const batchWorker = batches;
    await app.register(signonApp, {
      config,
      db: database.db,
      pool: database.pool,
      reads: database.reads,
      ...(worker ? { pushesQueued: () => worker.wake() } : {}),
      invitationBatchesQueued: () => batchWorker.wake(),
    });
    await starting.release();
    const url = await app.listen({ host: config.host, port: config.port });
    if (config.mode === "development") {
      app.log.warn(`Sign-on is in development mode: plain HTTP on the loopback address only (${url}). Set NODE_ENV=production to serve others.`);
    }
    // A hint only: if the database has just gone away, it is left out rather than ending the start. Not where the
    // launcher creates the first administrator itself (npm start's first start).
    if (config.firstAdministratorHint && (await countPeople(database.db).catch((error: unknown) => (isDatabaseUnavailable(error) ? null : Promise.reject(error)))) === 0) {
      app.log.info(
        "No accounts yet. Create the first administrator with:\n" +
          '  npx signon users create --email you@example.org --name "Your Name" --role superadmin --generate-password',
      );
    }
    pushes?.start();
    // Suspends people who have not signed in for `inactivityDays`: first shortly after start, then hourly.
    const inactivity = startInactivityJob(worker ? { ...ctx, pushesQueued: () => worker.wake() } : ctx, {
      log: { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message), error: (message) => app.log.error(message) },
      ...config.jobs,
      firstRunMs: options.inactivityFirstRunMs ?? config.jobs.firstRunMs,
    });
    // Deletes sessions, tokens, codes and counters that can no longer be used: first shortly after start, then hourly.
    const expiredRecords = startExpiredRecordsJob(ctx, {
      log: { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message), error: (message) => app.log.error(message) },
      ...config.jobs,
    });
    // Renews API users' tokens close to expiring (renewalWindowMs), once each, for those with automatic renewal on.
    // The same key as the app's (resolved from the configuration or the development key file).
    const tokenRenewal = startTokenRenewalJob({ ...ctx, secretKey: await resolveSecretKey(config.secretKey, config.dataDir) }, {
      log: { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message), error: (message) => app.log.error(message) },
      ...config.jobs,
    });
    // Replaces signing keys older than SIGNON_SIGNING_KEY_ROTATION_DAYS; the old ones stay published until their tokens expire.
    const keyRotation = startHourlyJob(
      "signing key rotation",
      async () => {
        if (await rotateSigningKeysIfDue(keysCtx)) app.log.info("Rotated the OpenID Connect signing keys");
      },
      { log: { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message), error: (message) => app.log.error(message) }, ...config.jobs },
    );
    // Fetches the organisation register when one is configured and a fetch is due, one instance at a time.
    const organisationRegister = startOrganisationRegisterJob(ctx, {
      log: { info: (message) => app.log.info(message), warn: (message) => app.log.warn(message), error: (message) => app.log.error(message) },
      ...config.jobs,
      fetch: options.fetch,
    });
    let closing: Promise<void> | undefined;
    const close = (closeOptions: { drain?: boolean } = {}) =>
      (closing ??= (async () => {
        try {
          await inactivity.stop();
          await expiredRecords.stop();
          await tokenRenewal.stop();
          await keyRotation.stop();
          await organisationRegister?.stop();
          await batches?.stop();
          await pushes?.stop();
          await (closeOptions.drain === true ? drainAndClose(app) : app.close());
          const unfinished = await settleBackgroundWork(10_000);
          if (unfinished > 0) app.log.warn(`Stopped with ${unfinished} piece(s) of work begun after an answer (a mail on its way to the SMTP server, or a password-reset request) not finished`);
        } finally {
          await database.close();
        }
      })());
    return { app, config, url, pushes, close };
  } catch (error) {
    await starting.release();
    await batches?.stop();
    await pushes?.stop();
    await app.close();
    await database.close();
    throw error;
  }
}

async function main(): Promise<void> {
  let running: RunningSignon;
  try {
    running = await startSignon();
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DatabaseStartError) {
      console.error(`Sign-on cannot start: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      running.app.log.info(`${signal}: closing`);
      running.close({ drain: true }).then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
    });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
