/**
 * The ways a connection to PostgreSQL fails over TLS, as `pg` and Node's
 * `tls` report them, and one sentence for each that says what to set. Like
 * `faults.ts`, which uses it, this module imports nothing.
 */

/** Why PostgreSQL and this client could not agree on a TLS connection. */
export type TlsRefusal =
  /** pg_hba has only `hostssl` lines for this client, and it came without TLS (28000 "… no encryption"). */
  | { kind: "encryption-required" }
  /** The connection string asks for TLS and the server answered that it has none. */
  | { kind: "tls-not-offered" }
  /** The server's certificate does not lead to a CA this client trusts. */
  | { kind: "certificate-untrusted"; code: string }
  /** The server's certificate does not name the host this client connected to. */
  | { kind: "certificate-name"; host: string; names: string }
  /** The server's certificate, or its CA's, has expired or is not valid yet. */
  | { kind: "certificate-expired" | "certificate-not-yet-valid"; code: string }
  /** The server wants a client certificate and got none (28000). */
  | { kind: "client-certificate-required" }
  /** The server did not accept the client certificate (a TLS alert, or 28000 for its name). */
  | { kind: "client-certificate-refused"; code: string }
  /** Any other failure of the TLS handshake. */
  | { kind: "handshake-failed"; code: string };

/** Node's certificate verification codes of a chain that does not end at a trusted CA. */
const untrustedCodes = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "INVALID_CA",
]);

/** TLS alerts the server sends when it does not accept the client's certificate. */
const clientCertificateAlerts = new Set([
  "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA",
  "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE",
  "ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN",
  "ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED",
  "ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED",
  "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED",
]);

/** How deep {@link tlsRefusal} follows `cause`: drizzle wraps the driver's error once. */
const maxDepth = 5;

/**
 * The TLS refusal that `error` (or the driver's error it wraps) reports, or
 * `null` when it is about something else.
 */
export function tlsRefusal(error: unknown): TlsRefusal | null {
  let current = error;
  for (let depth = 0; depth <= maxDepth && typeof current === "object" && current !== null; depth++) {
    const found = refusalOf(current as { code?: unknown; message?: unknown; host?: unknown; cert?: unknown });
    if (found !== null) return found;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function refusalOf(error: { code?: unknown; message?: unknown; host?: unknown; cert?: unknown }): TlsRefusal | null {
  const code = typeof error.code === "string" ? error.code : "";
  const message = typeof error.message === "string" ? error.message : "";
  if (code === "28000") {
    if (/\bno encryption$/.test(message)) return { kind: "encryption-required" };
    if (/requires a valid client certificate/.test(message)) return { kind: "client-certificate-required" };
    if (/^certificate (authentication|validation)/.test(message)) return { kind: "client-certificate-refused", code };
    return null;
  }
  if (message === "The server does not support SSL connections") return { kind: "tls-not-offered" };
  if (untrustedCodes.has(code)) return { kind: "certificate-untrusted", code };
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    const names = (error.cert as { subjectaltname?: unknown } | undefined)?.subjectaltname;
    return { kind: "certificate-name", host: typeof error.host === "string" ? error.host : "the host", names: typeof names === "string" && names !== "" ? names : "no name" };
  }
  if (code === "CERT_HAS_EXPIRED") return { kind: "certificate-expired", code };
  if (code === "CERT_NOT_YET_VALID") return { kind: "certificate-not-yet-valid", code };
  if (clientCertificateAlerts.has(code)) return { kind: "client-certificate-refused", code };
  if (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") || message === "There was an error establishing an SSL connection") {
    return { kind: "handshake-failed", code };
  }
  return null;
}

/** What a sentence about a TLS refusal may name: the server, the setting that holds its URL, the URL's `sslrootcert`. */
export interface TlsRefusalContext {
  /** `host:port` (see `databaseAddress`). */
  server?: string;
  /** The setting the connection string comes from, e.g. `DATABASE_URL`. */
  setting?: string;
  /** The connection string's `sslrootcert`, when it has one. */
  rootCert?: string | null;
}

/**
 * One sentence (without its final full stop) saying why the connection was
 * refused and what to set, e.g. "PostgreSQL at db.internal:5432 accepts only
 * TLS connections: add sslmode=verify-full and sslrootcert=<the deployment's
 * CA certificate> to DATABASE_URL".
 */
export function describeTlsRefusal(refusal: TlsRefusal, context: TlsRefusalContext = {}): string {
  const server = context.server === undefined ? "PostgreSQL" : `PostgreSQL at ${context.server}`;
  const setting = context.setting ?? "the connection string";
  switch (refusal.kind) {
    case "encryption-required":
      return `${server} accepts only TLS connections: add sslmode=verify-full and sslrootcert=<the deployment's CA certificate> to ${setting}`;
    case "tls-not-offered":
      return `${server} does not offer TLS, which the sslmode of ${setting} asks for: turn TLS on at the server (ssl = on, with its certificate and key), or leave sslmode out only for a server on this machine`;
    case "certificate-untrusted":
      return context.rootCert
        ? `the certificate of ${server} is not signed by the CA in ${setting}'s sslrootcert (${context.rootCert}): point sslrootcert at the CA that signed the server's certificate (the deployment's ca.crt)`
        : `the certificate of ${server} is not signed by a CA this machine trusts: add sslrootcert=<the deployment's CA certificate> to ${setting}`;
    case "certificate-name":
      return `the certificate of ${server} is not valid for the name ${refusal.host} (it names ${refusal.names}): connect to a name the certificate holds in ${setting}, or give the server a certificate that names ${refusal.host}`;
    case "certificate-expired":
      return `the certificate of ${server}, or its CA's, has expired: renew it`;
    case "certificate-not-yet-valid":
      return `the certificate of ${server} is not valid yet: check the clocks of this machine and of the one that made the certificate`;
    case "client-certificate-required":
      return `${server} requires a client certificate: add sslcert= and sslkey= (this machine's certificate and key from the deployment's CA) to ${setting}`;
    case "client-certificate-refused":
      return `${server} refused the client certificate of ${setting}: use an sslcert signed by the CA the server trusts (its ssl_ca_file), whose common name is the database user`;
    case "handshake-failed":
      return `the TLS handshake with ${server} failed: check the sslmode of ${setting} against the server's TLS settings`;
  }
}
