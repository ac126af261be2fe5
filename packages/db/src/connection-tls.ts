import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";

/**
 * What a connection string asks of TLS, as node-postgres 8 reads it
 * (`pg-connection-string`): libpq's `sslmode`, `sslrootcert`, `sslcert` and
 * `sslkey`, and `uselibpqcompat`.
 */
export interface ConnectionTls {
  /** `host:port` (or the socket folder and port), for messages. */
  server: string;
  /** Whether the server is on this machine: a Unix socket, or a loopback address (`localhost`, 127.0.0.0/8, `::1`). */
  local: boolean;
  /** `sslmode`, or `null` when the URL has none. */
  sslmode: string | null;
  /** `uselibpqcompat=true`: `sslmode` means what it means to libpq (`require` does not check the certificate). */
  libpqCompat: boolean;
  /** `sslrootcert`: the CA certificate(s) the server's certificate must lead to, instead of Node's own list. */
  rootCert: string | null;
  /** `sslcert` and `sslkey`: this client's certificate and key, for a server that asks for one. */
  cert: string | null;
  key: string | null;
}

/** The TLS settings of `url`; a string that is not a URL has none (node-postgres then reports it). */
export function connectionTls(url: string): ConnectionTls {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { server: "the server", local: false, sslmode: null, libpqCompat: false, rootCert: null, cert: null, key: null };
  }
  const parameter = (name: string): string | null => {
    const value = parsed.searchParams.get(name);
    return value === null || value === "" ? null : value;
  };
  const hostParameter = parameter("host");
  const host = hostParameter ?? decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, "$1");
  return {
    server: `${host || "localhost"}:${parameter("port") ?? (parsed.port || "5432")}`,
    local: isLocalHost(host),
    sslmode: parameter("sslmode"),
    libpqCompat: parameter("uselibpqcompat") === "true",
    rootCert: parameter("sslrootcert"),
    cert: parameter("sslcert"),
    key: parameter("sslkey"),
  };
}

/** A Unix socket's folder, a loopback address, or no host at all (node-postgres then connects to `localhost`). */
function isLocalHost(host: string): boolean {
  if (host === "" || host.startsWith("/") || host.toLowerCase() === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return isIP(host) === 6 && /^(0*:)*:?0*1$/.test(host);
}

/** The `sslmode` values that check the server's certificate against a CA whatever the version of node-postgres. */
const verifyingModes = new Set(["verify-full", "verify-ca"]);

/**
 * Why `url` may not be used in production, or `null` when it may: a server on
 * another machine must be reached over TLS that checks its certificate,
 * `sslmode=verify-full` (or `verify-ca`). A server on this machine (a Unix
 * socket, a loopback address: the embedded database) needs no TLS. The
 * reason starts with a verb, to follow the setting's name ("DATABASE_URL
 * reaches db.internal:5432 without TLS …").
 */
export function productionTlsProblem(url: string): string | null {
  const tls = connectionTls(url);
  if (tls.local || (tls.sslmode !== null && verifyingModes.has(tls.sslmode))) return null;
  const verified = "sslmode=verify-full&sslrootcert=<the deployment's CA certificate>";
  const local = "or reach a server on this machine through a Unix socket or a loopback address";
  if (tls.sslmode === null || tls.sslmode === "disable") {
    return `reaches ${tls.server} without TLS (${tls.sslmode === null ? "it has no sslmode" : "sslmode=disable"}): in production, add ${verified} to it, ${local}`;
  }
  return `asks for sslmode=${tls.sslmode}, which does not promise that the certificate of ${tls.server} is checked (libpq does not check it, nor will node-postgres 9): in production, use ${verified} instead, ${local}`;
}

/** The files a connection string names, what each must hold, and what to do when it does not. */
const tlsFiles = [
  { parameter: "sslrootcert", field: "rootCert", holds: "certificate", fix: "put the deployment's CA certificate there (ca.crt of make-certificates.sh) or correct the path" },
  { parameter: "sslcert", field: "cert", holds: "certificate", fix: "put this machine's certificate there or correct the path" },
  { parameter: "sslkey", field: "key", holds: "key", fix: "put this machine's private key there, readable by this service's user only, or correct the path" },
] as const;

/**
 * Why the TLS files of `url` (its `sslrootcert`, `sslcert`, `sslkey`) cannot
 * be used, in one sentence naming `setting` and the path, or `null` when they
 * can (or it names none). node-postgres reads them at every new connection
 * and throws from deep inside the pool when one is missing: checked at
 * start-up, the service says so instead.
 */
export function unusableTlsFile(url: string, setting: string): string | null {
  const tls = connectionTls(url);
  for (const file of tlsFiles) {
    const path = tls[file.field];
    if (path === null) continue;
    if (file.parameter === "sslrootcert" && path === "system") {
      return `${setting} has sslrootcert=system, which node-postgres takes for a file name: leave sslrootcert out to trust the CAs Node.js trusts, or name the deployment's CA certificate`;
    }
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      return `The ${file.parameter} of ${setting}, ${path}, cannot be read (${readFailure(error)}): ${file.fix}`;
    }
    if (!holdsPem(text, file.holds)) {
      return `The ${file.parameter} of ${setting}, ${path}, does not hold ${file.holds === "key" ? "an unencrypted PEM private key" : "a PEM certificate"}: ${file.fix}`;
    }
  }
  return null;
}

function readFailure(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "permission denied to this process's user";
  if (code === "EISDIR") return "it is a folder";
  return typeof code === "string" ? code : String(error);
}

function holdsPem(text: string, kind: "certificate" | "key"): boolean {
  try {
    if (kind === "certificate") new X509Certificate(text);
    else createPrivateKey(text);
    return true;
  } catch {
    return false;
  }
}
