import { DrizzleQueryError } from "drizzle-orm";
import Fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { PARAMETERS_LEFT_OUT, REDACTED, redactLogFields, requestIdServerOptions, serviceLoggerOptions } from "../src/index.js";
import { LogCapture } from "./fixtures/log-capture.js";

const log = new LogCapture();
const app = Fastify({ ...requestIdServerOptions(), logger: serviceLoggerOptions({ stream: log }) });
app.post("/echo", async (request) => {
  // What careless code might log: the whole request's parts.
  request.log.info({ body: request.body, query: request.query, headers: request.headers }, "careless");
  request.log.info({ password: "pw-top-level", form: { client_secret: "cs-nested" } }, "fields named like secrets");
  return { ok: true };
});
afterAll(() => app.close());

describe("service logs", () => {
  it("log a request by method and path, without its query string", async () => {
    log.lines.length = 0;
    await app.inject({ method: "POST", url: "/echo?access_token=qs-token-value", payload: {} });
    const incoming = log.entries().find((entry) => entry["msg"] === "incoming request");
    expect(incoming?.["req"]).toEqual({ method: "POST", path: "/echo", ip: "127.0.0.1" });
    expect(log.text).not.toContain("qs-token-value");
  });

  it("redact headers, bodies, query objects and fields named like credentials", async () => {
    log.lines.length = 0;
    await app.inject({
      method: "POST",
      url: "/echo?refresh_token=qs-refresh",
      headers: { authorization: "Bearer header-bearer-value", cookie: "session=cookie-value" },
      payload: { password: "body-password" },
    });
    for (const secret of ["qs-refresh", "header-bearer-value", "cookie-value", "body-password", "pw-top-level", "cs-nested"]) {
      expect(log.text).not.toContain(secret);
    }
    const careless = log.entries().find((entry) => entry["msg"] === "careless");
    expect(careless).toMatchObject({ body: REDACTED, query: REDACTED, headers: { authorization: REDACTED, cookie: REDACTED } });
    const named = log.entries().find((entry) => entry["msg"] === "fields named like secrets");
    expect(named).toMatchObject({ password: REDACTED, form: { client_secret: REDACTED } });
  });
});

describe("errors in service logs", () => {
  const errors = new LogCapture();
  const failing = Fastify({ logger: serviceLoggerOptions({ stream: errors }) });
  failing.get("/fails", async () => {
    const violation = Object.assign(new Error('duplicate key value violates unique constraint "users_email_lower_key"'), {
      code: "23505",
      constraint: "users_email_lower_key",
      table: "users",
      detail: "Key (lower(email))=(someone.private@example.org) already exists.",
    });
    throw new DrizzleQueryError("insert into users (email, password_hash) values ($1, $2)", ["someone.private@example.org", "$argon2id$hash-value"], violation);
  });
  afterAll(() => failing.close());

  it("name the failed statement and the database's code, never its parameters or the values of a key", async () => {
    const response = await failing.inject({ method: "GET", url: "/fails" });
    expect(response.statusCode).toBe(500);
    for (const secret of ["someone.private@example.org", "$argon2id$hash-value"]) expect(errors.text).not.toContain(secret);
    const logged = errors.entries().find((entry) => entry["err"] !== undefined)?.["err"] as Record<string, unknown>;
    expect(logged).toMatchObject({
      type: "DrizzleQueryError",
      message: `Failed query: insert into users (email, password_hash) values ($1, $2)\nparams: ${PARAMETERS_LEFT_OUT}`,
      cause: { code: "23505", constraint: "users_email_lower_key", table: "users" },
    });
    expect(logged["stack"]).toContain("params: [parameters left out]");
  });
});

describe("redactLogFields", () => {
  it("writes a line with nothing to redact as it is, without a copy", () => {
    const fields = { responseTime: 1.5, res: { statusCode: 200 }, course: { key: "course-v1:A+B+C" } };
    expect(redactLogFields(fields)).toBe(fields);
  });

  it("redacts from a copy, leaving the object the caller logged unchanged", () => {
    const form = { email: "someone@example.org", password: "plain" };
    const fields = { form, token: "abc" };
    expect(redactLogFields(fields)).toEqual({ form: { email: "someone@example.org", password: REDACTED }, token: REDACTED });
    expect(fields).toEqual({ form: { email: "someone@example.org", password: "plain" }, token: "abc" });
  });
});

describe("a failed statement's parameters", () => {
  const lines = new LogCapture();
  const logger = Fastify({ logger: serviceLoggerOptions({ stream: lines }) }).log;
  const failure = () =>
    new DrizzleQueryError("update users set email = $1 where uid = $2", ["leaked.address@example.org", "uid-1"], new Error("connection reset"));

  it("are cut wherever the log meets them: an error alone, its message quoted in a text or a field, an error under any key", () => {
    lines.lines.length = 0;
    logger.error(failure());
    logger.error({ err: failure() });
    logger.error(`hourly job failed: ${failure().message}`);
    logger.error({ error: failure().message, batch: { failure: failure(), note: `row: ${failure().message}` } }, "batch row failed");
    expect(lines.lines).toHaveLength(4);
    expect(lines.text).not.toContain("leaked.address@example.org");
    expect(lines.text).toContain("update users set email = $1 where uid = $2");
    expect(lines.entries()[0]?.["msg"]).toBe(`Failed query: update users set email = $1 where uid = $2\nparams: ${PARAMETERS_LEFT_OUT}`);
  });

  it("leave a stack's frames in place, and take nothing else for an error that is not one", () => {
    lines.lines.length = 0;
    logger.error({ err: failure() }, "failed");
    logger.error({ err: null }, "no error at all");
    logger.error({ err: "Failed query: select $1\nparams: leaked.address@example.org" }, "a text as an error");
    const [withStack, nothing, text] = lines.entries().map((entry) => entry["err"] as { stack: string; message: string });
    expect(withStack?.stack).toMatch(/params: \[parameters left out\]\n {4}at /);
    expect(nothing?.message).toBe("[null left out]");
    expect(text?.message).toBe(`Failed query: select $1\nparams: ${PARAMETERS_LEFT_OUT}`);
    expect(lines.text).not.toContain("leaked.address@example.org");
  });
});
