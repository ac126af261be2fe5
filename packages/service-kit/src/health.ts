import type { FastifyInstance } from "fastify";
import { TESSERA_VERSION } from "./version.js";

/**
 * One readiness check: resolves when the dependency is usable; rejects (or
 * does not settle in time) when it is not. A {@link CheckFailure} carries a
 * reason safe to show to anyone; any other error is logged and shown only as
 * "failed".
 */
export type ReadinessCheck = () => Promise<void>;

/** A failed check whose message says why, in words safe to put in a public response. */
export class CheckFailure extends Error {
  override readonly name = "CheckFailure";
}

/** Options of {@link registerHealthChecks}. */
export interface HealthCheckOptions {
  /** Checks by name, run in parallel on each `/healthcheck/ready`. */
  checks: Record<string, ReadinessCheck>;
  /** A check that has not answered after this long has failed (default 2000 ms). */
  timeoutMs?: number;
  /** The version both endpoints answer (default: Tessera's, {@link TESSERA_VERSION}). */
  version?: string;
}

/** The paths of the health endpoints: probes reach them without credentials, and they are not logged line by line. */
export const HEALTH_CHECK_PATHS: readonly string[] = ["/healthcheck/live", "/healthcheck/ready"];

/** The result of one check in the `/healthcheck/ready` body. */
export type CheckResult = { status: "ok" } | { status: "failed"; reason: string };

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new CheckFailure(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([check(), timedOut]);
    return { status: "ok" };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Adds the health endpoints:
 *
 * - `GET /healthcheck/live`: `200 {"status":"ok","version":"…"}` while the
 *   process serves HTTP at all (for restarts: it checks nothing else).
 * - `GET /healthcheck/ready`: runs every check; `200 {"status":"ok","version":"…","checks":{…}}`
 *   when all pass, else `503 {"status":"unavailable","version":"…","failed":[names],"checks":{…}}`
 *   (for load balancers: send no traffic until ready).
 *
 * `version` says which release answers: during a rolling upgrade, which
 * instances run the new one.
 *
 * A check is logged when it starts failing (warning) and when it passes
 * again (with how long it failed), not on every probe.
 */
export function registerHealthChecks(app: FastifyInstance, options: HealthCheckOptions): void {
  const timeoutMs = options.timeoutMs ?? 2000;
  const noStore = { "cache-control": "no-store" };
  const version = options.version ?? TESSERA_VERSION;

  app.get("/healthcheck/live", async (_request, reply) => reply.headers(noStore).send({ status: "ok", version }));

  // Requests that arrive while the checks run share that run, so a burst of probes (or a flood) costs one round of checks.
  let running: Promise<{ checks: Record<string, CheckResult>; failed: string[] }> | null = null;
  // Since when each failing check has failed: a check is logged when it starts failing and when it passes again, not on every probe.
  const failingSince = new Map<string, number>();
  const runAll = async () => {
    const names = Object.keys(options.checks);
    const results = await Promise.all(
      names.map(async (name): Promise<CheckResult> => {
        try {
          const result = await runCheck(options.checks[name] as ReadinessCheck, timeoutMs);
          const since = failingSince.get(name);
          if (since !== undefined) {
            failingSince.delete(name);
            app.log.info({ check: name }, `readiness check ${name} passes again after ${((Date.now() - since) / 1000).toFixed(1)} s`);
          }
          return result;
        } catch (error) {
          const reason = error instanceof CheckFailure ? error.message : "failed";
          if (!failingSince.has(name)) {
            failingSince.set(name, Date.now());
            app.log.warn(error instanceof CheckFailure ? { check: name, reason } : { err: error, check: name }, `readiness check ${name} failed`);
          }
          return { status: "failed", reason };
        }
      }),
    );
    const checks = Object.fromEntries(names.map((name, index) => [name, results[index] as CheckResult]));
    return { checks, failed: names.filter((_name, index) => results[index]?.status !== "ok") };
  };

  app.get("/healthcheck/ready", async (_request, reply) => {
    running ??= runAll().finally(() => {
      running = null;
    });
    const { checks, failed } = await running;
    if (failed.length === 0) return reply.headers(noStore).send({ status: "ok", version, checks });
    return reply.code(503).headers(noStore).send({ status: "unavailable", version, failed, checks });
  });
}
