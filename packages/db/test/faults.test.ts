import { describe, expect, it } from "vitest";
import { describeDatabaseError, isDatabaseUnavailable, tlsRefusal } from "../src/faults.js";

/** An error as `pg` reports a server message: a message and a SQLSTATE `code`. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: "FATAL" });
}

/** An error as Node reports a socket failure. */
function socketError(code: string): Error {
  return Object.assign(new Error(`read ${code}`), { code, errno: -1, syscall: "read" });
}

/** An error as Node's TLS reports a certificate that does not verify. */
function certificateError(code: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { code, ...extra });
}

/** pg_hba with only hostssl lines, met without TLS. */
const noEncryption = () => serverError("28000", 'no pg_hba.conf entry for host "10.0.0.5", user "signon", database "signon", no encryption');
const wrongName = () =>
  certificateError("ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames: IP: 10.0.0.11 is not in the cert's list: ", {
    host: "10.0.0.11",
    cert: { subjectaltname: "DNS:db1.internal" },
  });

/** What drizzle throws: its own message (with the SQL and parameters) around the driver's error. */
function drizzleWrapped(cause: Error): Error {
  return Object.assign(new Error("Failed query: select * from secrets where email = $1\nparams: ada@example.org"), { cause });
}

describe("isDatabaseUnavailable", () => {
  it.each([
    ["08000 connection_exception", serverError("08000", "connection exception")],
    ["08006 connection_failure", serverError("08006", "connection failure")],
    ["08P01 protocol_violation", serverError("08P01", "protocol violation")],
    ["57P01 admin_shutdown (pg_terminate_backend)", serverError("57P01", "terminating connection due to administrator command")],
    ["57P02 crash_shutdown", serverError("57P02", "terminating connection because of crash of another server process")],
    ["57P03 cannot_connect_now", serverError("57P03", "the database system is starting up")],
    ["53300 too_many_connections", serverError("53300", "sorry, too many clients already")],
    ["25006 read_only_sql_transaction (a standby not yet promoted)", drizzleWrapped(serverError("25006", "cannot execute INSERT in a read-only transaction"))],
    ["ECONNRESET", socketError("ECONNRESET")],
    ["ECONNREFUSED", socketError("ECONNREFUSED")],
    ["EPIPE", socketError("EPIPE")],
    ["ETIMEDOUT", socketError("ETIMEDOUT")],
    ["a lost connection", new Error("Connection terminated unexpectedly")],
    ["a connect timeout", new Error("Connection terminated due to connection timeout")],
    ["a pool checkout timeout", new Error("timeout exceeded when trying to connect")],
    ["a client that lost its connection", new Error("Client has encountered a connection error and is not queryable")],
    ["a pool that was ended", new Error("Cannot use a pool after calling end on the pool")],
    ["drizzle's wrapper around 57P01", drizzleWrapped(serverError("57P01", "terminating connection due to administrator command"))],
    ["drizzle's wrapper around a lost connection", drizzleWrapped(new Error("Connection terminated unexpectedly"))],
    ["an AggregateError of refused addresses", Object.assign(new AggregateError([socketError("ECONNREFUSED"), socketError("ECONNREFUSED")], ""), { code: "ECONNREFUSED" })],
    ["an AggregateError without a code of its own", new AggregateError([socketError("ECONNREFUSED")], "")],
    ["a refusal of a connection without TLS (28000 … no encryption)", noEncryption()],
    ["a server that does not offer TLS", new Error("The server does not support SSL connections")],
    ["a certificate from another CA", certificateError("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate")],
    ["a self-signed certificate", certificateError("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate")],
    ["a certificate for another name", wrongName()],
    ["an expired certificate", certificateError("CERT_HAS_EXPIRED", "certificate has expired")],
    ["drizzle's wrapper around a TLS refusal", drizzleWrapped(noEncryption())],
  ])("is true for %s", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a unique violation (23505)", serverError("23505", "duplicate key value violates unique constraint")],
    ["a syntax error (42601)", serverError("42601", "syntax error at or near")],
    ["a serialization failure (40001)", serverError("40001", "could not serialize access")],
    ["a deadlock (40P01)", serverError("40P01", "deadlock detected")],
    ["a NUL in a string (22021)", serverError("22021", "invalid byte sequence for encoding")],
    ["query_canceled (57014)", serverError("57014", "canceling statement due to statement timeout")],
    ["a plain Error", new Error("something else")],
    ["drizzle's wrapper around a constraint error", drizzleWrapped(serverError("23505", "duplicate key"))],
    ["a code that only starts like class 08", serverError("080", "short")],
    ["a wrong password (28P01)", serverError("28P01", 'password authentication failed for user "signon"')],
    ["another pg_hba refusal (28000 without \"no encryption\")", serverError("28000", 'no pg_hba.conf entry for host "10.0.0.5", user "signon", database "signon", SSL encryption')],
    ["undefined", undefined],
    ["null", null],
    ["a string", "Connection terminated unexpectedly"],
  ])("is false for %s", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it("stops following causes that loop", () => {
    const error = new Error("outer") as Error & { cause?: unknown };
    error.cause = error;
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe("describeDatabaseError", () => {
  it("gives the driver's code and message, never drizzle's SQL text or parameters", () => {
    const description = describeDatabaseError(drizzleWrapped(serverError("57P01", "terminating connection due to administrator command")));
    expect(description).toBe("57P01 terminating connection due to administrator command");
  });

  it("does not repeat a code the message already names", () => {
    expect(describeDatabaseError(socketError("ECONNRESET"))).toBe("read ECONNRESET");
  });

  it("takes the first inner message of an AggregateError without one of its own", () => {
    const error = Object.assign(new AggregateError([new Error("connect ECONNREFUSED 127.0.0.1:1")], ""), { code: "ECONNREFUSED" });
    expect(describeDatabaseError(error)).toBe("connect ECONNREFUSED 127.0.0.1:1");
  });
});

describe("tlsRefusal", () => {
  it.each([
    ["encryption-required", noEncryption(), { kind: "encryption-required" }],
    ["tls-not-offered", new Error("The server does not support SSL connections"), { kind: "tls-not-offered" }],
    ["certificate-untrusted", certificateError("SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain"), { kind: "certificate-untrusted", code: "SELF_SIGNED_CERT_IN_CHAIN" }],
    ["certificate-name", wrongName(), { kind: "certificate-name", host: "10.0.0.11", names: "DNS:db1.internal" }],
    ["certificate-expired", certificateError("CERT_HAS_EXPIRED", "certificate has expired"), { kind: "certificate-expired", code: "CERT_HAS_EXPIRED" }],
    ["client-certificate-required", serverError("28000", "connection requires a valid client certificate"), { kind: "client-certificate-required" }],
    ["client-certificate-refused", certificateError("ERR_SSL_TLSV1_ALERT_UNKNOWN_CA", "tlsv1 alert unknown ca"), { kind: "client-certificate-refused", code: "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA" }],
    ["handshake-failed", certificateError("ERR_SSL_WRONG_VERSION_NUMBER", "wrong version number"), { kind: "handshake-failed", code: "ERR_SSL_WRONG_VERSION_NUMBER" }],
  ])("names %s", (_name, error, refusal) => {
    expect(tlsRefusal(error)).toEqual(refusal);
  });

  it("is null for other errors", () => {
    expect(tlsRefusal(socketError("ECONNREFUSED"))).toBeNull();
    expect(tlsRefusal(serverError("28P01", "password authentication failed"))).toBeNull();
    expect(tlsRefusal(undefined)).toBeNull();
  });
});

describe("describeDatabaseError of a refusal over TLS", () => {
  it("says in one sentence what to set, naming the server and the setting, with the driver's words after it", () => {
    expect(describeDatabaseError(drizzleWrapped(noEncryption()), { server: "db.internal:5432", setting: "DATABASE_URL" })).toBe(
      "PostgreSQL at db.internal:5432 accepts only TLS connections: add sslmode=verify-full and sslrootcert=<the deployment's CA certificate> to DATABASE_URL " +
        '(28000 no pg_hba.conf entry for host "10.0.0.5", user "signon", database "signon", no encryption)',
    );
  });

  it("speaks of the connection string when it does not know which", () => {
    expect(describeDatabaseError(new Error("The server does not support SSL connections"))).toBe(
      "PostgreSQL does not offer TLS, which the sslmode of the connection string asks for: turn TLS on at the server (ssl = on, with its certificate and key), " +
        "or leave sslmode out only for a server on this machine (The server does not support SSL connections)",
    );
  });

  it("tells an untrusted certificate apart by whether the URL names a CA", () => {
    const error = certificateError("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate");
    expect(describeDatabaseError(error, { server: "db.internal:5432", setting: "DATABASE_READ_URL", rootCert: "/etc/tessera/tls/ca.crt" })).toBe(
      "the certificate of PostgreSQL at db.internal:5432 is not signed by the CA in DATABASE_READ_URL's sslrootcert (/etc/tessera/tls/ca.crt): " +
        "point sslrootcert at the CA that signed the server's certificate (the deployment's ca.crt) (UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate)",
    );
    expect(describeDatabaseError(error, { server: "db.internal:5432", setting: "DATABASE_URL", rootCert: null })).toBe(
      "the certificate of PostgreSQL at db.internal:5432 is not signed by a CA this machine trusts: add sslrootcert=<the deployment's CA certificate> to DATABASE_URL " +
        "(UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate)",
    );
  });

  it("names the host and the certificate's names when they differ", () => {
    expect(describeDatabaseError(wrongName(), { server: "10.0.0.11:5432", setting: "DATABASE_URL" })).toBe(
      "the certificate of PostgreSQL at 10.0.0.11:5432 is not valid for the name 10.0.0.11 (it names DNS:db1.internal): connect to a name the certificate holds in DATABASE_URL, " +
        "or give the server a certificate that names 10.0.0.11 (ERR_TLS_CERT_ALTNAME_INVALID Hostname/IP does not match certificate's altnames: IP: 10.0.0.11 is not in the cert's list: )",
    );
  });
});
