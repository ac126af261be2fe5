import type { FastifyInstance, FastifyRequest, preParsingAsyncHookHandler, preValidationAsyncHookHandler } from "fastify";
import { findUnstorableInput } from "../domain/storable-input.js";
import { ApiError, badRequest } from "./errors.js";

/** The parts of a request that carry input, as Fastify names them in validation messages. */
const PARTS = ["params", "querystring", "body"] as const;

/** A wildcard path parameter of this service is always a course key (see `app.ts`). */
function fieldName(part: (typeof PARTS)[number], path: string): string {
  return `${part}${part === "params" && path.startsWith("/*") ? `/course_key${path.slice(2)}` : path === "/" ? "" : path}`;
}

/**
 * Refuses, with 400 naming the field, a request whose path parameters, query
 * or JSON body hold text that PostgreSQL cannot store (NUL, unpaired
 * surrogates) or nesting past `MAX_JSON_DEPTH`. It runs before the schema
 * validation, whose recursive checks deep nesting would overflow.
 */
export const screenRequestInput: preValidationAsyncHookHandler = async (request: FastifyRequest) => {
  for (const part of PARTS) {
    const value = part === "params" ? request.params : part === "querystring" ? request.query : request.body;
    const problem = findUnstorableInput(value);
    if (problem) throw badRequest(`Invalid ${part}: ${fieldName(part, problem.path)} ${problem.reason}.`);
  }
};

/**
 * Adds {@link screenRequestInput} to every route registered after this call,
 * as its last `preValidation` step: a route's own steps (the admin import
 * checks the caller first) keep their place before it.
 */
export function screenEveryRoute(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    route.preValidation = [...own, screenRequestInput];
  });
}

/**
 * Refuses, with 415, a request body in a content coding (`Content-Encoding:
 * gzip`, …): the service reads bodies as they come and decodes none, so a
 * compressed body would otherwise be read as the bytes of its coding, and one
 * mislabelled as compressed as if it were not (RFC 9110 §8.4). It runs
 * before the body is read, after the `onRequest` steps (where the push
 * receivers check their token).
 */
export const refuseEncodedBodies: preParsingAsyncHookHandler = async (request, _reply, payload) => {
  const coding = request.headers["content-encoding"];
  if (coding === undefined || /^\s*(identity\s*)?$/i.test(coding)) return payload;
  const length = request.headers["content-length"];
  if (request.headers["transfer-encoding"] === undefined && (length === undefined || /^\s*0*\s*$/.test(length))) return payload;
  throw new ApiError(415, "Unsupported Content-Encoding: send the body without a content coding.");
};
