// The services' side of TLS to PostgreSQL, against a server of this file's own that accepts only hostssl
// connections, with certificates made by deploy/certificates/make-certificates.sh as an operator makes them.
import { chmod, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, DatabaseStartError, describeDatabaseError, isDatabaseUnavailable, startDatabase } from "../src/index.js";
import { certificateToolsMissing, makeCertificates, removeDataFolder, startHostsslServer, type HostsslServer } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";

const missing = certificateToolsMissing();
if (missing !== null && process.env["CI"] === "true") throw new Error(`${missing}; CI must run the TLS tests`);

/** Runs make-certificates.sh as an operator does: FOLDER NAME..., with EXTRA_NAMES. */
const certificates = (folder: string, names: string[], extraNames = "") => makeCertificates(folder, names, extraNames);

let root: string;
let server: HostsslServer;
/** The deployment's certificates, and those of another run (another CA). */
let deployment: string;
let elsewhere: string;

beforeAll(async () => {
  if (missing !== null) return;
  root = await mkdtemp(join(tmpdir(), "tessera-tls-"));
  await chmod(root, 0o711);
  deployment = join(root, "deployment");
  elsewhere = join(root, "elsewhere");
  // The database machine's certificate names db1.internal and localhost, not 127.0.0.1.
  certificates(deployment, ["db1.internal"], "localhost");
  // signon's client certificate: its common name is the database user.
  certificates(deployment, ["signon"]);
  certificates(elsewhere, ["db1.internal"], "localhost");
  server = await startHostsslServer({
    certFile: join(deployment, "db1.internal.crt"),
    keyFile: join(deployment, "db1.internal.key"),
    caFile: caOf(deployment),
    hba: [
      "hostssl all signon 127.0.0.1/32 scram-sha-256 clientcert=verify-full",
      "hostssl all signon ::1/128 scram-sha-256 clientcert=verify-full",
      "hostssl all all 127.0.0.1/32 scram-sha-256",
      "hostssl all all ::1/128 scram-sha-256",
    ],
  });
  const setUp = new pg.Client({ connectionString: at("localhost", { sslmode: "verify-full", sslrootcert: caOf(deployment) }) });
  await setUp.connect();
  try {
    await setUp.query("create role signon login password 'signon-password'");
  } finally {
    await setUp.end();
  }
});

afterAll(async () => {
  if (missing !== null) return;
  await server?.stop();
  await removeDataFolder(root);
});

function caOf(folder: string): string {
  return join(folder, "ca.crt");
}

/** The server's URL, as the superuser, at `host` with these query parameters. */
function at(host: string, parameters: Record<string, string> = {}, credentials?: { user: string; password: string }): string {
  const url = new URL(server.url);
  url.hostname = host;
  if (credentials !== undefined) {
    url.username = credentials.user;
    url.password = credentials.password;
  }
  url.search = new URLSearchParams(parameters).toString();
  return url.toString();
}

const port = (): string => String(server.port);

/** What `startDatabase` fails with for `url`, migrating and waiting for the database as a service does. */
async function startFailure(options: { url: string; readUrls?: string[] }): Promise<Error> {
  const error: unknown = await startDatabase({ ...options, migrations: [fixtureMigrations], waitWhileUnavailable: true }).then(
    async (database) => {
      await database.close();
      throw new Error("the database started");
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(DatabaseStartError);
  return error as Error;
}

async function encrypted(client: pg.Pool | pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ ssl: boolean }>("select ssl from pg_stat_ssl where pid = pg_backend_pid()");
  return rows[0]?.ssl ?? false;
}

describe.skipIf(missing !== null)("PostgreSQL that accepts only hostssl connections", () => {
  it("is reached over TLS with sslmode=verify-full and the deployment's CA: the pool, a client made from its options, and a read replica", async () => {
    const url = at("localhost", { sslmode: "verify-full", sslrootcert: caOf(deployment) });
    const database = await startDatabase({ url, readUrls: [url], migrations: [fixtureMigrations], waitWhileUnavailable: true });
    try {
      expect(await encrypted(database.pool)).toBe(true);
      // What Sign-on's notification connection does (oauth/token-answer-changes.ts).
      const listener = new pg.Client({ ...database.pool.options, application_name: "tls test" });
      await listener.connect();
      try {
        expect(await encrypted(listener)).toBe(true);
      } finally {
        await listener.end();
      }
      await database.reads.check();
      const replica = database.reads.pool();
      expect(replica).not.toBe(database.pool);
      expect(await encrypted(replica)).toBe(true);
    } finally {
      await database.close();
    }
  });

  it("takes a client certificate from sslcert and sslkey, and says which to add when the server requires one", async () => {
    const signon = { user: "signon", password: "signon-password" };
    const withCertificate = at("localhost", { sslmode: "verify-full", sslrootcert: caOf(deployment), sslcert: join(deployment, "signon.crt"), sslkey: join(deployment, "signon.key") }, signon);
    const pool = createPool({ url: withCertificate, max: 1 });
    try {
      expect(await encrypted(pool)).toBe(true);
    } finally {
      await pool.end();
    }

    const error = await startFailure({ url: at("localhost", { sslmode: "verify-full", sslrootcert: caOf(deployment) }, signon) });
    expect(error.message).toBe(
      `PostgreSQL at localhost:${port()} requires a client certificate: add sslcert= and sslkey= (this machine's certificate and key from the deployment's CA) to DATABASE_URL (28000 connection requires a valid client certificate).`,
    );
  });

  it("refuses a connection without TLS, and the start says in one sentence what to add to DATABASE_URL", async () => {
    const sentence =
      `PostgreSQL at localhost:${port()} accepts only TLS connections: add sslmode=verify-full and sslrootcert=<the deployment's CA certificate> to DATABASE_URL ` +
      `(28000 no pg_hba.conf entry for host "127.0.0.1", user "postgres", database "postgres", no encryption).`;
    for (const url of [at("localhost", { sslmode: "disable" }), at("localhost")]) {
      expect((await startFailure({ url })).message).toBe(sentence);
    }
    // A command that applies its migrations itself (signon migrate) opens the database without any: the same sentence.
    await expect(startDatabase({ url: at("localhost", { sslmode: "disable" }) })).rejects.toThrow(new DatabaseStartError(sentence));
  });

  it("once running, counts the refusal as the database being unavailable (503) and logs the same sentence", async () => {
    const pool = createPool({ url: at("localhost", { sslmode: "disable" }), max: 1 });
    try {
      const error: unknown = await pool.query("select 1").catch((reason: unknown) => reason);
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(describeDatabaseError(error, { server: `localhost:${port()}`, setting: "DATABASE_URL" })).toMatch(
        new RegExp(`^PostgreSQL at localhost:${port()} accepts only TLS connections: add sslmode=verify-full and sslrootcert=.* to DATABASE_URL \\(28000 `),
      );
    } finally {
      await pool.end();
    }
  });

  it("refuses a read replica's URL without TLS at start-up, naming DATABASE_READ_URL", async () => {
    const error = await startFailure({ url: at("localhost", { sslmode: "verify-full", sslrootcert: caOf(deployment) }), readUrls: [at("localhost", { sslmode: "disable" })] });
    expect(error.message).toMatch(new RegExp(`^PostgreSQL at localhost:${port()} accepts only TLS connections: add sslmode=verify-full and sslrootcert=.* to DATABASE_READ_URL \\(28000 `));
  });

  it("refuses a certificate that a CA from another run of make-certificates.sh does not vouch for", async () => {
    const error = await startFailure({ url: at("localhost", { sslmode: "verify-full", sslrootcert: caOf(elsewhere) }) });
    const sentence =
      `The certificate of PostgreSQL at localhost:${port()} is not signed by the CA in DATABASE_URL's sslrootcert (${caOf(elsewhere)}): ` +
      `point sslrootcert at the CA that signed the server's certificate (the deployment's ca.crt)`;
    // The server sends its CA in the chain when it has ssl_ca_file (for client certificates), and only its own certificate otherwise.
    expect([`${sentence} (SELF_SIGNED_CERT_IN_CHAIN self-signed certificate in certificate chain).`, `${sentence} (UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate).`]).toContain(
      error.message,
    );
  });

  it("refuses, with verify-full, a host name the certificate does not hold (127.0.0.1 for a certificate of db1.internal and localhost)", async () => {
    const error = await startFailure({ url: at("127.0.0.1", { sslmode: "verify-full", sslrootcert: caOf(deployment) }) });
    expect(error.message).toBe(
      `The certificate of PostgreSQL at 127.0.0.1:${port()} is not valid for the name 127.0.0.1 (it names DNS:db1.internal, DNS:localhost): ` +
        `connect to a name the certificate holds in DATABASE_URL, or give the server a certificate that names 127.0.0.1 ` +
        `(ERR_TLS_CERT_ALTNAME_INVALID Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ).`,
    );
    // The name was all that was wrong: libpq's verify-ca, which checks the CA only, gets through at the same address.
    const pool = createPool({ url: at("127.0.0.1", { sslmode: "verify-ca", uselibpqcompat: "true", sslrootcert: caOf(deployment) }), max: 1 });
    try {
      expect(await encrypted(pool)).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it("stops the start with one sentence naming the setting and the path when sslrootcert cannot be read", async () => {
    const absent = join(root, "absent", "ca.crt");
    const error = await startFailure({ url: at("localhost", { sslmode: "verify-full", sslrootcert: absent }) });
    expect(error.message).toBe(`The sslrootcert of DATABASE_URL, ${absent}, cannot be read (no such file): put the deployment's CA certificate there (ca.crt of make-certificates.sh) or correct the path.`);

    const notACertificate = join(deployment, "db1.internal.key");
    const readError = await startFailure({ url: at("localhost"), readUrls: [at("localhost", { sslmode: "verify-full", sslrootcert: notACertificate })] });
    expect(readError.message).toBe(`The sslrootcert of DATABASE_READ_URL, ${notACertificate}, does not hold a PEM certificate: put the deployment's CA certificate there (ca.crt of make-certificates.sh) or correct the path.`);
  });

  it("fails a checkout, rather than throwing out of the pool, when sslrootcert goes missing while it runs", async () => {
    const pool = createPool({ url: at("localhost", { sslmode: "verify-full", sslrootcert: join(root, "gone.crt") }), max: 1 });
    try {
      await expect(pool.query("select 1")).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await pool.end();
    }
  });
});
