import { describe, expect, it } from "vitest";
import { describeDatabaseError, isDatabaseUnavailable } from "../src/faults.js";

/** An error as `pg` reports a server message: a message and a SQLSTATE `code`. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: "FATAL" });
}

/** An error as Node reports a socket failure. */
function socketError(code: string): Error {
  return Object.assign(new Error(`read ${code}`), { code, errno: -1, syscall: "read" });
}

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
