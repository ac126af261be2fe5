import type { Static, TObject } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, RouteOptions } from "fastify";

/** What a message calls a field's value ("an e-mail address"), and the unit of its limit when not "characters". */
export type FieldNoun = string | { noun: string; unit: string };

/** How a form route answers a value longer than its body schema allows: which fields a person types, and the form shown again. */
export interface OverLongAnswer {
  /** The route's body schema: the limits are its `maxLength`s. */
  readonly schema: TObject;
  /** The fields a person types, with what a message calls them; hidden fields are not among them. */
  readonly fields: Readonly<Record<string, FieldNoun>>;
  /** Shows the form again (400), with the values posted and a message by field name. */
  readonly reshow: (request: FastifyRequest, reply: FastifyReply, body: unknown, errors: Record<string, string>) => Promise<unknown>;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** For an HTML form: a typed value over its limit shows the form again with a message, not the error page. */
    overLong?: OverLongAnswer;
  }
}

/**
 * The route config entry of an HTML form whose typed fields have limits
 * (`maxLength` in `schema`, which stays the hard cap): a post with a value
 * over its limit, and nothing else wrong, gets the form again from
 * `reshow`, with the values as posted and "Enter an e-mail address of at
 * most 254 characters" by the field, instead of the bare "Bad request" page.
 * `reshow` runs after the route's own guards (session, CSRF token, role),
 * as its handler would; `body` has the schema's shape, only longer.
 */
export function overLongAnswer<S extends TObject>(
  schema: S,
  fields: Partial<Record<keyof Static<S> & string, FieldNoun>>,
  reshow: (request: FastifyRequest, reply: FastifyReply, body: Static<S>, errors: Record<string, string>) => Promise<unknown>,
): OverLongAnswer {
  return { schema, fields: fields as Record<string, FieldNoun>, reshow: (request, reply, body, errors) => reshow(request, reply, body as Static<S>, errors) };
}

/** "Enter an e-mail address of at most 254 characters". */
export function overLongMessage(noun: FieldNoun, limit: number): string {
  const { noun: what, unit } = typeof noun === "string" ? { noun, unit: "characters" } : noun;
  return `Enter ${what} of at most ${limit} ${unit}`;
}

/** A value's length as the schemas count it: in characters (code points), a pair of surrogates being one. */
function lengthOf(value: string): number {
  let length = 0;
  for (const _character of value) length += 1;
  return length;
}

function limitOf(schema: TObject, field: string): number | undefined {
  const limit = (schema.properties[field] as { maxLength?: unknown } | undefined)?.maxLength;
  return typeof limit === "number" ? limit : undefined;
}

/**
 * The messages for the typed fields over their limits, when that is all
 * that is wrong with the request: the body with those values cut to their
 * limits passes the route's schemas. `null` when no typed field is over its
 * limit, or something else is wrong too (a field repeated, missing or
 * unknown), which keeps the usual refusal.
 */
function overLongErrors(request: FastifyRequest, answer: OverLongAnswer): Record<string, string> | null {
  const body = request.body;
  if (typeof body !== "object" || body === null) return null;
  const errors: Record<string, string> = {};
  const cut: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [field, noun] of Object.entries(answer.fields)) {
    const value = cut[field];
    const limit = limitOf(answer.schema, field);
    if (typeof value !== "string" || limit === undefined || lengthOf(value) <= limit) continue;
    errors[field] = overLongMessage(noun, limit);
    cut[field] = Array.from(value).slice(0, limit).join("");
  }
  if (Object.keys(errors).length === 0) return null;
  const validBody = request.getValidationFunction("body");
  if (validBody === undefined || !validBody(cut)) return null;
  // Validation stops at the body's first failure: the query and headers are checked here instead.
  for (const [part, value] of [["querystring", request.query], ["headers", request.headers]] as const) {
    const valid = request.getValidationFunction(part);
    if (valid !== undefined && !valid(value)) return null;
  }
  return errors;
}

/** The messages of a request whose only fault is over-long typed values, kept between the route's first and last `preHandler`. */
const overLongFound = new WeakMap<FastifyRequest, Record<string, string>>();

/** First `preHandler` of a route with `config.overLong`: any other invalid request is refused at once, before the guards, as without it. */
const refuseInvalidRequest: preHandlerAsyncHookHandler = async function (request) {
  const invalid = request.validationError;
  if (invalid === undefined) return;
  const answer = request.routeOptions.config.overLong;
  const errors = invalid.validationContext === "body" && answer !== undefined ? overLongErrors(request, answer) : null;
  if (errors === null) throw invalid;
  overLongFound.set(request, errors);
};

/** Last `preHandler`: past the route's guards (session, CSRF token, role), the form again instead of the handler. */
const answerOverLong: preHandlerAsyncHookHandler = async function (request, reply) {
  const errors = overLongFound.get(request);
  if (errors === undefined) return;
  // Awaiting the reply waits until it is sent: the handler must not run after it.
  await request.routeOptions.config.overLong!.reshow(request, reply, request.body, errors);
  if (!reply.sent) throw new Error(`${request.routeOptions.method} ${request.routeOptions.url}: config.overLong.reshow sent no page`);
};

/**
 * Makes every route registered after it with `config.overLong` answer a
 * post whose only fault is over-long typed values with its form: the route
 * gets `attachValidation` and a first `preHandler` that refuses any other
 * invalid request at once, as before; for over-long values its guards
 * (session, CSRF token, role) run, then a last `preHandler` shows the form
 * again, and the handler never runs. Throws at start-up for a
 * `config.overLong` that names another schema than the route's body, or a
 * field without a limit.
 */
export function registerOverLongAnswers(app: FastifyInstance): void {
  app.addHook("onRoute", (route: RouteOptions) => {
    const answer = route.config?.overLong;
    if (answer === undefined) return;
    const where = `${String(route.method)} ${route.url}`;
    if (route.schema?.body !== answer.schema) throw new Error(`${where}: config.overLong is for another body schema than the route's`);
    for (const field of Object.keys(answer.fields)) {
      if (limitOf(answer.schema, field) === undefined) throw new Error(`${where}: config.overLong names ${field}, which has no maxLength in the body schema`);
    }
    route.attachValidation = true;
    route.preHandler = [refuseInvalidRequest, ...[route.preHandler ?? []].flat(), answerOverLong];
  });
}
