// Services started while PostgreSQL cannot be reached (started before it, or
// during a restart) wait for it, saying so once, and start by themselves when
// it answers; a database they cannot use as configured (missing database,
// refused login) ends them with one sentence and a non-zero exit, no stack
// trace. While they wait they answer /healthcheck/live (so that a supervisor
// does not restart them) and 503 to everything else. Sign-on, Completion and
// the editorial app run as processes, as shipped.
// Needs DATABASE_URL (a PostgreSQL server); it creates and drops a database of its own.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropDatabase, FaultProxy, recreateDatabase } from "@tessera/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, runShipped, spawnShipped, waitUntilReady, type ServiceProcess, type ShippedService } from "@tessera/test-support";

const serverUrl = process.env["DATABASE_URL"];
if (!serverUrl) console.warn("tests/faults skipped: set DATABASE_URL to a PostgreSQL server to run the start-up fault test");

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The environment each service needs besides its database. */
function serviceEnvironments(dataDir: string, ports: { signon: number; completion: number; editorial: number }): Record<ShippedService, { env: Record<string, string> }> {
  const signonUrl = `http://127.0.0.1:${ports.signon}`;
  return {
    signon: {
      env: {
        NODE_ENV: "development",
        SIGNON_SECRET_KEY: "fa".repeat(32),
        SIGNON_DATA_DIR: dataDir,
        SIGNON_MAIL_PRINT: "false",
        SIGNON_HOST: "127.0.0.1",
        SIGNON_PORT: String(ports.signon),
        SIGNON_PUBLIC_URL: signonUrl,
      },
    },
    completion: {
      env: { HOST: "127.0.0.1", PORT: String(ports.completion), SIGNON_URL: signonUrl, COMPLETION_SIGNON_CLIENT_ID: "start-up-test" },
    },
    editorial: {
      env: {
        HOST: "127.0.0.1",
        PORT: String(ports.editorial),
        SIGNON_URL: signonUrl,
        EDITORIAL_APP_URL: `http://127.0.0.1:${ports.editorial}`,
        EDITORIAL_APP_CLIENT_ID: "start-up-test",
        EDITORIAL_APP_CLIENT_SECRET: "start-up-test-secret",
      },
    },
  };
}

describe.skipIf(!serverUrl)("services started while the database cannot be reached", () => {
  const name = `faults_start_${randomBytes(4).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "tessera-faults-start-"));
  let databaseUrl: string;
  let proxy: FaultProxy;
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    databaseUrl = await recreateDatabase(serverUrl as string, name);
    proxy = await FaultProxy.start(databaseUrl);
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await proxy?.close();
    await dropDatabase(serverUrl as string, name);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("wait, logging one line each, stay running, and start by themselves when the database answers", async () => {
    await proxy.refuse();
    const ports = { signon: await freePort(), completion: await freePort(), editorial: await freePort() };
    const environments = serviceEnvironments(dataDir, ports);
    for (const [service, { env }] of Object.entries(environments) as [ShippedService, { env: Record<string, string> }][]) {
      services.push(spawnShipped(service, { port: ports[service], env: { ...env, DATABASE_URL: proxy.urlFor(databaseUrl) } }));
    }
    const waitingLine = `database unavailable at 127.0.0.1:${proxy.port}`;
    const waitingLines = (service: ServiceProcess) => service.output().split("\n").filter((line) => line.includes(waitingLine));
    // Each says once that it waits (polling: starting three processes on a busy machine takes a while).
    for (let n = 0; n < 600 && services.some((service) => waitingLines(service).length === 0 && service.exit() === null); n++) await pause(100);
    for (const service of services) {
      expect(service.exit(), `${service.name}:\n${service.output()}`).toBeNull();
      expect(waitingLines(service), service.output()).toHaveLength(1);
      expect(waitingLines(service)[0]).toMatch(/ECONNREFUSED.*retrying until it answers/);
    }
    // Several retries later: still running, still one line each, live (so not restarted by a supervisor) but not ready.
    await pause(3000);
    for (const service of services) {
      expect(service.exit(), `${service.name}:\n${service.output()}`).toBeNull();
      expect(waitingLines(service)).toHaveLength(1);
      expect((await fetch(`${service.url}/healthcheck/live`)).status, service.name).toBe(200);
      const ready = await fetch(`${service.url}/healthcheck/ready`);
      expect(ready.status, service.name).toBe(503);
      expect(ready.headers.get("retry-after")).toBe("5");
      expect((await fetch(`${service.url}/`)).status, service.name).toBe(503);
    }
    await proxy.accept();
    // Signon migrates first (Completion and the editorial app may take their turn at the migration lock): a minute at most.
    await Promise.all(services.map((service) => waitUntilReady(service, "/healthcheck/ready", 60_000)));
    for (const service of services) {
      expect(service.output()).toMatch(new RegExp(`database: reached 127\\.0\\.0\\.1:${proxy.port} after \\d+\\.\\d s`));
      expect((await fetch(`${service.url}/healthcheck/live`)).status).toBe(200);
    }
  });
});

describe.skipIf(!serverUrl)("services started on a database they cannot use as configured", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tessera-faults-config-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const missingDatabase = () => {
    const url = new URL(serverUrl as string);
    url.pathname = "/tessera_faults_no_such_database";
    return url.toString();
  };
  const unknownUser = () => {
    const url = new URL(serverUrl as string);
    url.username = "tessera_faults_no_such_user";
    url.password = "not-the-password";
    return url.toString();
  };

  // One process per service (starting them is what takes time): the two mistakes shared out between them.
  it("end at once on a missing database or a refused login, with one sentence and no stack trace", async () => {
    const ports = { signon: await freePort(), completion: await freePort(), editorial: await freePort() };
    const mistakes: Record<string, { url: string; sentence: RegExp }> = {
      signon: { url: missingDatabase(), sentence: /^Sign-on cannot start: The database tessera_faults_no_such_database at [^ ]+ cannot be used as postgres: 3D000 database "tessera_faults_no_such_database" does not exist; create the database/m },
      completion: { url: unknownUser(), sentence: /^completion: The database \S+ at [^ ]+ cannot be used as tessera_faults_no_such_user: 28\w{3} .*; check the user/m },
      editorial: { url: missingDatabase(), sentence: /^editorial-app: The database tessera_faults_no_such_database .* does not exist; create the database/m },
    };
    const results = await Promise.all(
      (Object.entries(serviceEnvironments(dataDir, ports)) as [ShippedService, { env: Record<string, string> }][]).map(async ([service, { env }]) => ({
        service,
        ...(await runShipped(service, [], { ...env, DATABASE_URL: (mistakes[service] as { url: string }).url })),
      })),
    );
    for (const { service, code, output } of results) {
      expect(code, `${service}:\n${output}`).not.toBe(0);
      expect(code, `${service}:\n${output}`).not.toBeNull();
      expect(output, service).toMatch((mistakes[service] as { sentence: RegExp }).sentence);
      expect(output, service).not.toMatch(/^\s+at /m);
      expect(output, service).not.toContain("not-the-password");
    }
  });
});
