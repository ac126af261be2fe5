import type { FastifyServerOptions } from "fastify";
import { messageWithoutParameters, serializeError } from "./error-serializer.js";

/** Written in place of a redacted value. */
export const REDACTED = "[redacted]";

/** Names of fields that hold credentials or personal input, wherever they sit. */
const secretFields = [
  "authorization",
  "cookie",
  "password",
  "client_secret",
  "access_token",
  "refresh_token",
  "id_token",
  "token",
  "secret",
  "body",
  "query",
];

/**
 * What pino removes from every log line, as a second line of defence behind
 * the request serializer (which writes no headers, query or body at all):
 * request headers and cookies, the response's `Set-Cookie`, and any field
 * named like a credential at the top level or one level down (a line logged
 * as `{ client_secret }` or `{ params: { password } }`).
 */
export const REDACTED_LOG_PATHS: readonly string[] = [
  "req.headers",
  "req.raw",
  'res.headers["set-cookie"]',
  "headers.authorization",
  "headers.cookie",
  ...secretFields,
  ...secretFields.map((name) => `*.${name}`),
];

/** The part of a request that goes into the log: never the query string, headers or body. */
export function serializeRequest(request: { method: string; url: string; ip?: string }): { method: string; path: string; ip?: string } {
  const path = request.url.split("?")[0] ?? "";
  return request.ip === undefined ? { method: request.method, path } : { method: request.method, path, ip: request.ip };
}

/** Options of {@link serviceLoggerOptions}. */
export interface ServiceLoggerOptions {
  /** pino level (default `info`). */
  level?: string;
  /** Where log lines go (default standard output); tests pass a stream that keeps them. */
  stream?: { write(line: string): void };
}

/**
 * Fastify `logger` options for a Tessera service: one JSON object per line,
 * requests logged by method, path (no query string: it can carry
 * `access_token`) and client address, credentials redacted, errors
 * without the values of a failed statement (`serializeError`).
 */
export function serviceLoggerOptions(options: ServiceLoggerOptions = {}): NonNullable<Exclude<FastifyServerOptions["logger"], boolean>> {
  return {
    level: options.level ?? "info",
    redact: { paths: [...REDACTED_LOG_PATHS], censor: REDACTED },
    serializers: { req: serializeRequest, err: serializeError },
    hooks: {
      logMethod(args, write) {
        for (let index = 0; index < args.length; index++) {
          const arg: unknown = args[index];
          if (typeof arg === "string") args[index] = messageWithoutParameters(arg);
        }
        write.apply(this, args);
      },
    },
    ...(options.stream ? { stream: options.stream } : {}),
  };
}
