import type { FastifyServerOptions } from "fastify";
import { messageWithoutParameters, serializeError } from "./error-serializer.js";

/** Written in place of a redacted value. */
export const REDACTED = "[redacted]";

/** Names of fields that hold credentials or personal input, wherever they sit. */
export const REDACTED_LOG_FIELDS: readonly string[] = [
  "authorization",
  "cookie",
  "set-cookie",
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
const redactedFields = new Set(REDACTED_LOG_FIELDS);

/** Fields whose serializers write a fixed, safe shape (a request's method and path, a status code, an error without values). */
const serializedFields = new Set(["req", "res", "err"]);

/**
 * A log line's fields as written: `[redacted]` in place of any field named
 * like a credential, a body or a query (`REDACTED_LOG_FIELDS`), at the top
 * level or one level down (a line logged as `{ client_secret }` or
 * `{ params: { password } }`). A second line of defence behind the request
 * serializer, which writes no headers, query or body at all. The object a
 * caller logged is never changed: a line with something to redact is written
 * from a copy; the others, every request's own lines, cost no copy at all.
 */
export function redactLogFields(fields: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue;
    const value = fields[name];
    const written = redactedFields.has(name) ? REDACTED : serializedFields.has(name) ? value : withFieldsRedacted(value, 1);
    if (written !== value) {
      copy ??= { ...fields };
      copy[name] = written;
    }
  }
  return copy ?? fields;
}

/**
 * A value as written: an error without a failed statement's parameters
 * (`serializeError`), a text without them, and an object one level down
 * with its credential-named fields redacted (a copy when anything is).
 */
function withFieldsRedacted(value: unknown, levelsDown: number): unknown {
  if (typeof value === "string") return messageWithoutParameters(value);
  if (value instanceof Error) return serializeError(value);
  if (levelsDown === 0 || value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const fields = value as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue;
    const field = fields[name];
    const written = redactedFields.has(name) ? REDACTED : withFieldsRedacted(field, levelsDown - 1);
    if (written !== field) {
      copy ??= { ...fields };
      copy[name] = written;
    }
  }
  return copy ?? value;
}

/** The part of a response that goes into the log: its status, never its headers (`Set-Cookie`). */
export function serializeResponse(reply: { statusCode: number }): { statusCode: number } {
  return { statusCode: reply.statusCode };
}

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
    // Child loggers' bindings (a request's id) are written as their lines are.
    formatters: { log: redactLogFields, bindings: redactLogFields },
    serializers: { req: serializeRequest, res: serializeResponse, err: serializeError },
    hooks: {
      logMethod(args, write) {
        for (let index = 0; index < args.length; index++) {
          const arg: unknown = args[index];
          if (typeof arg === "string") args[index] = messageWithoutParameters(arg);
        }
        // Without a message, pino writes an error's own: the cut one instead.
        if (args.length === 1) {
          const [only] = args as unknown[];
          const error = only instanceof Error ? only : only !== null && typeof only === "object" ? (only as { err?: unknown }).err : undefined;
          if (error instanceof Error) (args as unknown[]).push(serializeError(error).message);
        }
        write.apply(this, args);
      },
    },
    ...(options.stream ? { stream: options.stream } : {}),
  };
}
