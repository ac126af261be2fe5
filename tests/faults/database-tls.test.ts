// Sign-on, Completion and the editorial app, as shipped, against a PostgreSQL server that accepts only hostssl
// connections (certificates from deploy/certificates/make-certificates.sh): with sslmode=verify-full and the
// deployment's CA every connection they open is encrypted; without TLS, with another CA, or with a host name the
// certificate does not hold, each ends at once with one sentence saying what to set; and in production each refuses a
// DATABASE_URL that reaches another machine without verified TLS before it connects at all.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { certificateToolsMissing, makeCertificates, startHostsslServer, type HostsslServer } from "@tessera/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, runShipped, spawnShipped, waitUntilReady, type ServiceProcess, type ShippedService } from "@tessera/test-support";

const missing = certificateToolsMissing();
if (missing !== null) {
  const line = `tests/faults/database-tls skipped: ${missing}`;
  if (process.env["CI"] === "true") throw new Error(`${line}; CI must run this test`);
  console.warn(line);
}

const services: ShippedService[] = ["signon", "completion", "editorial"];

/** What each service needs besides its database and port, in `mode`. */
function serviceEnv(service: ShippedService, dataDir: string, mode: "development" | "production"): Record<string, string> {
  const signonUrl = mode === "production" ? "https://signon.example.org" : "http://127.0.0.1:3000";
  switch (service) {
    case "signon":
      return {
        NODE_ENV: mode,
        SIGNON_SECRET_KEY: "7e".repeat(32),
        SIGNON_DATA_DIR: dataDir,
        SIGNON_MAIL_PRINT: "false",
        SIGNON_PUBLIC_URL: signonUrl,
        ...(mode === "production" ? { SIGNON_TRUST_PROXY: "true" } : {}),
      };
    case "completion":
      return { NODE_ENV: mode, SIGNON_URL: signonUrl, COMPLETION_SIGNON_CLIENT_ID: "tls-test" };
    case "editorial":
      return { NODE_ENV: mode, SIGNON_URL: signonUrl, EDITORIAL_APP_CLIENT_ID: "tls-test", EDITORIAL_APP_CLIENT_SECRET: "tls-test-secret", EDITORIAL_APP_DATA_DIR: dataDir };
  }
}

/** How each service begins the sentence it ends with. */
const prefix: Record<ShippedService, string> = { signon: "Sign-on cannot start: ", completion: "completion: ", editorial: "editorial-app: " };

describe.skipIf(missing !== null)("services and a PostgreSQL server that accepts only TLS", () => {
  const root = mkdtempSync(join(tmpdir(), "tessera-faults-tls-"));
  const deployment = join(root, "deployment");
  const elsewhere = join(root, "elsewhere");
  const ca = join(deployment, "ca.crt");
  let server: HostsslServer;
  const running: ServiceProcess[] = [];

  beforeAll(async () => {
    makeCertificates(deployment, ["db1.internal"]);
    makeCertificates(elsewhere, ["db1.internal"]);
    server = await startHostsslServer({ certFile: join(deployment, "db1.internal.crt"), keyFile: join(deployment, "db1.internal.key") });
  });
  afterAll(async () => {
    await Promise.all(running.map((service) => service.stop()));
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** The server's URL at `host` with these query parameters. */
  const at = (host: string, parameters: Record<string, string> = {}): string => {
    const url = new URL(server.url);
    url.hostname = host;
    url.search = new URLSearchParams(parameters).toString();
    return url.toString();
  };

  it("reach it with sslmode=verify-full and the deployment's CA, in production, over encrypted connections only", async () => {
    const url = at("localhost", { sslmode: "verify-full", sslrootcert: ca });
    for (const service of services) {
      running.push(spawnShipped(service, { port: await freePort(), env: { ...serviceEnv(service, join(root, "data"), "production"), DATABASE_URL: url } }));
    }
    await Promise.all(running.map((service) => waitUntilReady(service, "/healthcheck/ready", 120_000)));

    // Each readiness check queries the database, so each pool holds a connection for the next few seconds.
    for (const service of running) expect((await fetch(`${service.url}/healthcheck/ready`)).status, service.name).toBe(200);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; ssl: boolean }>(
        "select a.application_name as name, s.ssl from pg_stat_activity a join pg_stat_ssl s using (pid) where a.backend_type = 'client backend' and a.pid <> pg_backend_pid()",
      );
      // Each service's pool, and Sign-on's notification connection, which is opened from the pool's settings.
      expect(new Set(rows.map((row) => row.name))).toEqual(new Set(["signon", "signon token answers", "completion", "editorial"]));
      expect(rows.filter((row) => !row.ssl)).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it("end at once, with one sentence and no stack trace, when DATABASE_URL has no TLS, another CA, or a name the certificate does not hold", async () => {
    const mistakes: Record<ShippedService, { url: string; sentence: string }> = {
      signon: {
        url: at("localhost", { sslmode: "disable" }),
        sentence:
          `PostgreSQL at localhost:${server.port} accepts only TLS connections: add sslmode=verify-full and sslrootcert=<the deployment's CA certificate> to DATABASE_URL ` +
          `(28000 no pg_hba.conf entry for host "127.0.0.1", user "postgres", database "postgres", no encryption).`,
      },
      completion: {
        url: at("localhost", { sslmode: "verify-full", sslrootcert: join(elsewhere, "ca.crt") }),
        sentence:
          `The certificate of PostgreSQL at localhost:${server.port} is not signed by the CA in DATABASE_URL's sslrootcert (${join(elsewhere, "ca.crt")}): ` +
          `point sslrootcert at the CA that signed the server's certificate (the deployment's ca.crt) (UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate).`,
      },
      editorial: {
        url: at("127.0.0.1", { sslmode: "verify-full", sslrootcert: ca }),
        sentence:
          `The certificate of PostgreSQL at 127.0.0.1:${server.port} is not valid for the name 127.0.0.1 (it names DNS:db1.internal, DNS:localhost): ` +
          `connect to a name the certificate holds in DATABASE_URL, or give the server a certificate that names 127.0.0.1 ` +
          `(ERR_TLS_CERT_ALTNAME_INVALID Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ).`,
      },
    };
    const results = await Promise.all(
      services.map(async (service) => ({
        service,
        ...(await runShipped(service, [], { ...serviceEnv(service, join(root, "data"), "development"), PORT: "0", SIGNON_PORT: "0", DATABASE_URL: mistakes[service].url })),
      })),
    );
    for (const { service, code, stderr, output } of results) {
      expect(code, `${service}:\n${output}`).toBe(1);
      expect(stderr.trim().split("\n").at(-1), service).toBe(`${prefix[service]}${mistakes[service].sentence}`);
      expect(output, service).not.toMatch(/^\s+at /m);
    }
  });

  it("refuse, in production, a DATABASE_URL that reaches another machine without verified TLS, before connecting", async () => {
    const url = "postgres://tessera@db1.internal.invalid:5432/tessera?sslmode=disable";
    const results = await Promise.all(
      services.map(async (service) => ({ service, ...(await runShipped(service, [], { ...serviceEnv(service, join(root, "data"), "production"), PORT: "0", SIGNON_PORT: "0", DATABASE_URL: url })) })),
    );
    const reason =
      "reaches db1.internal.invalid:5432 without TLS (sslmode=disable): in production, add sslmode=verify-full&sslrootcert=<the deployment's CA certificate> to it, " +
      "or reach a server on this machine through a Unix socket or a loopback address";
    const expected: Record<ShippedService, { code: number; line: string }> = {
      signon: { code: 1, line: `Sign-on cannot start: DATABASE_URL: ${reason}` },
      completion: { code: 2, line: `completion: DATABASE_URL ${reason}.` },
      editorial: { code: 1, line: `editorial-app: DATABASE_URL ${reason}` },
    };
    for (const { service, code, stderr, output } of results) {
      expect({ code, stderr }, `${service}:\n${output}`).toEqual({ code: expected[service].code, stderr: `${expected[service].line}\n` });
    }
  });
});
