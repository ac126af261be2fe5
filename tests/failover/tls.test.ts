// No clear text anywhere behind the proxy: every address the documented deployment listens on (deploy/, with the
// certificates deploy/certificates/make-certificates.sh makes) is asked by a client in clear, by a client holding a
// certificate from another authority, and by a client without a certificate, and each is refused; a client with a
// certificate of the deployment's CA gets in, so that the refusals are the certificates' doing.
// Needs Debian's patroni, etcd-server, haproxy, postgresql-15 and pgbackrest; skipped without them, except under CI=true.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  clearClient,
  failoverClusterUnavailable,
  failoverPackages,
  postgresClient,
  runMakeCertificates,
  startFailoverCluster,
  tlsClient,
  type ListenerAnswer,
  type FailoverCluster,
  type Listener,
  type TlsIdentity,
} from "@tessera/test-support/drill";

const missing = failoverClusterUnavailable();
if (missing !== null) {
  const line = `tests/failover skipped: ${missing} (install with: apt-get install ${failoverPackages})`;
  if (process.env["CI"] === "true") throw new Error(`${line}; CI must run this test`);
  console.warn(line);
}

describe.skipIf(missing !== null)("TLS on every link of the Patroni cluster", () => {
  let cluster: FailoverCluster;
  let deployment: TlsIdentity;
  let intruder: TlsIdentity;

  beforeAll(async () => {
    cluster = await startFailoverCluster();
    deployment = cluster.certificates.identity("operator");
    // Another authority, made the same way, and a certificate of it.
    const elsewhere = mkdtempSync(join(tmpdir(), "tessera-other-ca-"));
    runMakeCertificates(elsewhere, ["intruder"]);
    intruder = { ca: readFileSync(join(elsewhere, "ca.crt")), cert: readFileSync(join(elsewhere, "intruder.crt")), key: readFileSync(join(elsewhere, "intruder.key")) };
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  /** What each kind of client got at `listener`. */
  async function answersAt(listener: Listener): Promise<Record<string, ListenerAnswer>> {
    if (listener.protocol === "postgres") {
      return {
        clear: await postgresClient(cluster.primaryUrl, listener.port, false),
        "another CA's certificate": await postgresClient(cluster.primaryUrl, listener.port, { ca: deployment.ca, cert: intruder.cert, key: intruder.key, servername: "localhost" }),
        // PostgreSQL asks for a password, not a certificate: without one, the deployment's CA and a password get in.
        "no certificate (TLS and the password)": await postgresClient(cluster.primaryUrl, listener.port, { ca: deployment.ca, servername: "localhost" }),
      };
    }
    const probe = listener.protocol === "https" ? "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" : null;
    // pgBackRest lets in only the machines its tls-server-auth names: the database machines at the repository's
    // server, the repository machine at theirs.
    const own = listener.protocol !== "pgbackrest" ? deployment : cluster.certificates.identity(listener.name.startsWith("backup") ? "node1" : "backup");
    return {
      clear: await clearClient(listener.port),
      "another CA's certificate": await tlsClient(listener.port, { ca: deployment.ca, cert: intruder.cert, key: intruder.key }, probe),
      "no certificate": await tlsClient(listener.port, { ca: deployment.ca }, probe),
      "the deployment's certificate": await tlsClient(listener.port, { ca: deployment.ca, cert: own.cert, key: own.key }, probe),
    };
  }

  it("refuses a client in clear, one with another authority's certificate and one without a certificate at every address", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    const table: Record<string, Record<string, ListenerAnswer>> = {};
    for (const listener of cluster.listeners()) {
      const where = `${listener.name} (${listener.protocol}, port ${listener.port})`;
      table[where] = await answersAt(listener);
      console.info(`${where}\n${Object.entries(table[where]).map(([client, answer]) => `  ${client}: ${answer}`).join("\n")}`);
    }
    for (const [where, answers] of Object.entries(table)) {
      expect(answers["clear"], `${where}, a client in clear`).toMatch(/^refused/);
      expect(answers["another CA's certificate"], `${where}, another CA's certificate`).toMatch(/^refused/);
      // pgBackRest's server greets a TLS client without a certificate, then refuses its every command (below).
      if ("no certificate" in answers && !where.includes("(pgbackrest,")) expect(answers["no certificate"], `${where}, no certificate`).toMatch(/^refused/);
      if ("the deployment's certificate" in answers) expect(answers["the deployment's certificate"], `${where}, the deployment's certificate`).toBe("accepted");
      if ("no certificate (TLS and the password)" in answers) expect(answers["no certificate (TLS and the password)"], `${where}, TLS and the password`).toBe("accepted");
    }
    // A client in clear is refused by pg_hba itself, which has no line for it.
    for (const [where, answers] of Object.entries(table)) if (where.includes("(postgres,")) expect(answers["clear"], where).toMatch(/28000 .*no encryption/);
  });

  it("runs pgBackRest's commands only for the machines its tls-server-auth names", async () => {
    // node1's own configuration, with a certificate of the deployment's CA that the repository does not list.
    const operator = { cert: cluster.certificates.certFile("operator"), key: cluster.certificates.keyFile("operator") };
    // (`info` exits 0 whatever it finds, and says what it found.)
    const refused = await cluster.backups.run([`--repo1-host-cert-file=${operator.cert}`, `--repo1-host-key-file=${operator.key}`, "info"], { on: "node1", timeoutMs: 60_000 });
    expect(refused).toMatch(/AccessError.*access denied/);
    // With its own, the same command reaches the repository.
    const own = await cluster.backups.run(["info"], { on: "node1", timeoutMs: 60_000 });
    expect(own).toMatch(/stanza: tessera/);
    expect(own).not.toMatch(/access denied/);
  });

  it("refuses a client that does not trust the server: the nodes' certificates come from the deployment's CA alone", async () => {
    const primary = cluster.listeners().find((listener) => listener.name === "HAProxy primary")!;
    expect(await postgresClient(cluster.primaryUrl, primary.port, { ca: intruder.ca, servername: "localhost" })).toMatch(/^refused: .*(SELF_SIGNED|UNABLE_TO_VERIFY|self.signed|unable to verify)/i);
    const rest = cluster.listeners().find((listener) => listener.protocol === "https")!;
    expect(await tlsClient(rest.port, { ca: intruder.ca, cert: deployment.cert, key: deployment.key }, "GET / HTTP/1.1\r\n\r\n")).toMatch(/^refused/);
  });

  it("tells, for every certificate of a machine, when it expires (deploy/certificates/certificate-metrics.py)", () => {
    const script = new URL("../../deploy/certificates/certificate-metrics.py", import.meta.url).pathname;
    const metrics = execFileSync("python3", [script, cluster.certificates.folder], { encoding: "utf8" });
    const ends = [...metrics.matchAll(/^tessera_certificate_not_after_seconds\{file="[^"]+\/([^/"]+)",subject="CN=([^"]+)",serial="[0-9A-F]+"\} (\d+)$/gm)].map(([, file, subject, at]) => ({
      file,
      subject,
      daysLeft: (Number(at) - Date.now() / 1000) / 86400,
    }));
    // Each machine's certificate (in its .crt and its .pem) for make-certificates.sh's 825 days, the authority's for 3650.
    expect(ends.filter((end) => end.file === "node1.crt")).toEqual([{ file: "node1.crt", subject: "node1", daysLeft: expect.closeTo(825, 0) }]);
    expect(ends.filter((end) => end.file === "ca.crt")).toEqual([{ file: "ca.crt", subject: "Tessera deployment CA", daysLeft: expect.closeTo(3650, 0) }]);
    expect(ends.length).toBe(1 + 2 * 9);
    expect(metrics).not.toMatch(/tessera_certificate_readable\{[^}]*\} 0/);
  });
});
