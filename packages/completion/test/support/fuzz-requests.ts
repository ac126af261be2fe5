import fc from "fast-check";

/**
 * Requests for the fuzz test, derived from the service's OpenAPI document:
 * every operation's path parameter, query parameters and JSON body schema
 * give plausible values (drawn from the scenario's users, courses and blocks,
 * so that requests get past validation and reach PostgreSQL), and each part
 * can be spoiled: NUL characters, unpaired surrogates, huge and negative
 * numbers, dates outside the accepted range, wrong types, deep nesting,
 * broken JSON, invalid percent-encoding, duplicated query parameters,
 * oversized bodies and wrong content types.
 */

type Schema = Record<string, unknown>;

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly schema?: Schema;
}

interface Operation {
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly content?: Record<string, { readonly schema?: Schema }> };
}

/** The parts of an OpenAPI 3.1 document that requests are derived from. */
export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components?: { readonly schemas?: Record<string, Schema> };
}

/** The methods the fuzz test sends. */
export type FuzzMethod = "GET" | "HEAD" | "POST" | "PUT";

/**
 * What a refusal of a route looks like: the API's `{"detail": …}`; the push
 * receivers' `{"error", "error_description"}` (`@tessera/signon-client`); or
 * `/metrics`, whose 401 is `{"error": "unauthorized"}` (`@tessera/service-kit`)
 * and whose other refusals are the API's.
 */
export type RefusalShape = "detail" | "signon-client" | "metrics";

/** A route the app registered, with what requests are derived from. */
export interface FuzzRoute {
  /** `METHOD /path/{course_key}/` or `METHOD /path/{uid}`, as the report names it. */
  readonly name: string;
  readonly method: FuzzMethod;
  /** The path with its parameters as `{name}`. */
  readonly template: string;
  /** The path parameters, each one of {@link PATH_PARAMETERS}. */
  readonly params: readonly string[];
  readonly query: readonly Parameter[];
  readonly body: Schema | null;
  /** Whether the route is in the OpenAPI document (else it is one of {@link UNDOCUMENTED_ROUTES}). */
  readonly documented: boolean;
  /** Who sends its plausible requests. */
  readonly callers: readonly FuzzCaller[];
  readonly refusal: RefusalShape;
  /** Whether a request may change stored data; a route that may not is checked to change nothing, whatever it answers. */
  readonly writes: boolean;
  /** How often it is picked, relative to the others. */
  readonly weight: number;
}

/** Who sends a request: a token of the scenario, no `Authorization` header, or a broken one. */
export type FuzzCaller =
  | "staff"
  | "admin"
  | "learner"
  | "masquerade"
  /** An API user of Sign-on holding `user_update_permission`, as Sign-on's own push credential does. */
  | "push"
  /** The bearer token `/metrics` requires. */
  | "metrics"
  | "none"
  | "unknown-token"
  /** A well-formed token of 20,000 characters: past the request header limit of Sign-on's server. */
  | "oversized-token"
  /** `Basic …`, or a bearer token with characters outside RFC 6750's. */
  | "malformed-header"
  | "latin1-header";

/** One request, ready for `app.inject`. */
export interface FuzzRequest {
  readonly route: string;
  readonly method: FuzzMethod;
  readonly url: string;
  readonly caller: FuzzCaller;
  readonly contentType: string | null;
  /** Further headers of a spoiled request (a `content-encoding` the service does not decode). */
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: string | Buffer | null;
}

/** What plausible values are made of: the scenario's names. */
export interface FuzzVocabulary {
  readonly usernames: readonly string[];
  readonly emails: readonly string[];
  readonly courseKeys: readonly string[];
  readonly blockKeys: readonly string[];
  readonly roles: readonly string[];
  readonly cohortIds: readonly number[];
  /** Stored users, as the bulk format writes them. */
  readonly users: readonly { readonly id: number; readonly username: string; readonly email: string }[];
  /** Sign-on users' uids, which the push receivers take in their path. */
  readonly signonUids: readonly string[];
  /** The block keys of each course that has a structure, so that a plausible batch names blocks of its course. */
  readonly blocksByCourse: Readonly<Record<string, readonly string[]>>;
}

/** The path parameters the fuzz test can fill: Fastify's wildcard (a course key here, see `app.ts`) and a Sign-on uid. */
const PATH_PARAMETERS: Record<string, string> = { "*": "course_key", uid: "uid" };

/** What the fuzz test knows of a route outside the OpenAPI document, by `METHOD /url` as Fastify registered it. */
interface UndocumentedRoute {
  readonly callers: readonly FuzzCaller[];
  readonly refusal: RefusalShape;
  /** How often it is picked: a documented route's GET, POST or PUT is 4, its HEAD 1. */
  readonly weight: number;
}

/**
 * The routes outside the OpenAPI document: the operators' endpoints, the
 * document itself, and Sign-on's push receivers. A route in neither place
 * fails the catalogue, so a new one cannot escape the fuzz test.
 */
export const UNDOCUMENTED_ROUTES: Readonly<Record<string, UndocumentedRoute>> = {
  "GET /healthcheck/live": { callers: ["none"], refusal: "detail", weight: 1 },
  "GET /healthcheck/ready": { callers: ["none"], refusal: "detail", weight: 1 },
  "GET /metrics": { callers: ["metrics"], refusal: "metrics", weight: 1 },
  "GET /api/completion/v1/openapi.json": { callers: ["none", "learner"], refusal: "detail", weight: 1 },
  "GET /api/completion/v1/": { callers: ["none", "learner"], refusal: "detail", weight: 1 },
  "PUT /auth/gds/api/users/:uid": { callers: ["push"], refusal: "signon-client", weight: 3 },
  "POST /auth/gds/api/users/:uid/reauth": { callers: ["push"], refusal: "signon-client", weight: 3 },
};

/** The routes' options as an `onRoute` hook sees them: method, URL and JSON schemas. */
export interface RegisteredRoute {
  readonly method: string | readonly string[];
  readonly url: string;
  readonly schema?: object | undefined;
}

function queryParameters(schema: Schema | undefined, problems: string[], name: string): Parameter[] {
  if (schema === undefined) return [];
  if (schema["patternProperties"] !== undefined || (schema["additionalProperties"] !== undefined && schema["additionalProperties"] !== false)) {
    problems.push(`${name}: an open query schema whose fields the fuzz test does not know`);
  }
  return Object.entries((schema["properties"] ?? {}) as Record<string, Schema>).map(([field, property]) => ({ name: field, in: "query", schema: property }));
}

/**
 * The routes to fuzz: every route the app registered (an `onRoute` hook
 * collects them), with the query parameters and body schema of its OpenAPI
 * operation, or for a route outside the document those of its own schemas
 * and what {@link UNDOCUMENTED_ROUTES} says of it. Throws, naming them all, for
 * routes the fuzz test cannot fill: a method it does not send, a path
 * parameter it has no values for, an open query schema, a route in neither
 * the document nor the list, or an operation of the document that no
 * registered route serves.
 */
export function fuzzRoutes(registered: readonly RegisteredRoute[], document: OpenApiDocument): FuzzRoute[] {
  const routes: FuzzRoute[] = [];
  const problems: string[] = [];
  const served = new Set<string>();
  for (const options of registered) {
    for (const method of [options.method].flat()) {
      const label = `${method} ${options.url}`;
      if (method !== "GET" && method !== "HEAD" && method !== "POST" && method !== "PUT") {
        problems.push(`${label}: a method the fuzz test does not send`);
        continue;
      }
      const params = [...options.url.matchAll(/:(\w+)|\*$/g)].map((match) => match[1] ?? "*");
      const unknown = params.filter((param) => PATH_PARAMETERS[param] === undefined);
      for (const param of unknown) problems.push(`${label}: the path parameter ${param} is unknown to the fuzz test`);
      if (unknown.length > 0) continue;
      const template = options.url.replace(/:(\w+)/g, "{$1}").replace(/\*$/, "{course_key}/");
      // A HEAD route is its GET route's twin: same parameters, no body in the answer.
      const asGet = method === "HEAD" ? "get" : method.toLowerCase();
      const operation = document.paths[template]?.[asGet];
      const name = `${method} ${template}`;
      const common = { name, method, template, params: params.map((param) => PATH_PARAMETERS[param]!) } as const;
      if (operation !== undefined) {
        served.add(`${asGet} ${template}`);
        const admin = template.includes("/admin/");
        routes.push({
          ...common,
          query: (operation.parameters ?? []).filter((parameter) => parameter.in === "query"),
          body: operation.requestBody?.content?.["application/json"]?.schema ?? null,
          documented: true,
          callers: admin ? ["admin"] : ["staff", "staff", "learner", "masquerade"],
          refusal: "detail",
          // Reads too: a single-user read stores the recomputed aggregates of a stale learner first (C14).
          writes: true,
          weight: method === "HEAD" ? 1 : 4,
        });
        continue;
      }
      const known = UNDOCUMENTED_ROUTES[`${method === "HEAD" ? "GET" : method} ${options.url}`];
      if (known === undefined) {
        problems.push(`${label}: neither in the OpenAPI document nor in the fuzz test's UNDOCUMENTED_ROUTES`);
        continue;
      }
      const schema = (options.schema ?? {}) as Record<string, Schema | undefined>;
      routes.push({
        ...common,
        query: queryParameters(schema["querystring"], problems, label),
        body: schema["body"] ?? null,
        documented: false,
        callers: known.callers,
        refusal: known.refusal,
        writes: false,
        weight: method === "HEAD" ? 1 : known.weight,
      });
    }
  }
  for (const [template, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations)) {
      if (!served.has(`${method} ${template}`)) problems.push(`${method.toUpperCase()} ${template}: in the OpenAPI document, but no route registered serves it`);
    }
  }
  if (problems.length > 0) throw new Error(`The fuzz test cannot fill these routes:\n${problems.join("\n")}`);
  return routes;
}

const LONE_SURROGATES = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** Strings that have broken services: control characters, unpaired surrogates, injection, sizes, look-alike numbers and dates. */
const HOSTILE_TEXT: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "ada\u0000",
    "\u0000ada",
    "%00",
    "\uD800",
    "ada\uDBFF",
    "\uDC00ada",
    "\uDE00\uD83D",
    "",
    " ",
    "null",
    "undefined",
    "NaN",
    "-1",
    "0",
    "1e400",
    "99999999999999999999999",
    "2147483648",
    "-2147483649",
    "0x10",
    "1.5",
    "true",
    "[]",
    "{}",
    "__proto__",
    "constructor",
    "'; drop table completion.learners; --",
    "../../etc/passwd",
    "\u202Eevil",
    "Ω≈ç√∫",
    "😀",
    "\r\n",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59-14:00",
    "+294277-01-01T00:00:00Z",
    "-000001-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2016-12-31T23:59:60Z",
    "x".repeat(300),
    "é".repeat(1000),
  ),
  LONE_SURROGATES,
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: fc.oneof(LONE_SURROGATES, fc.constantFrom("\u0000", "a", "%", "\uFFFF", "\uD83D\uDE00")), maxLength: 8 }),
);

const HOSTILE_NUMBERS = fc.oneof(
  fc.constantFrom(-1, -0, 0.5, 1.5, 2147483647, 2147483648, -2147483649, 2 ** 53 + 2, 1e308, -1e308, 5e-324, 1e21),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

const DATES = fc.constantFrom(
  "2026-02-01T10:00:00Z",
  "2026-02-01T10:00:00.123456+02:00",
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59Z",
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:00:00+14:00",
  "9999-12-31T23:59:59-14:00",
  "2016-12-31T23:59:60Z",
  "2026-13-01T00:00:00Z",
  "2026-01-01",
  "+294277-01-01T00:00:00Z",
);

/** Any JSON value: the wrong type for whatever schema asked. */
const ANY_JSON: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 2 }), HOSTILE_TEXT, HOSTILE_NUMBERS);

/** Mostly one of `usual`, now and then one of `odd`. */
function mostly<T>(usual: readonly T[], odd: readonly T[]): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: fc.constantFrom(...usual), weight: 4 }, { arbitrary: fc.constantFrom(...odd), weight: 1 });
}

/** Plausible values of a field by its name (and JSON type, where a name has two forms); null for a name the scenario does not know. */
function plausibleByName(name: string, type: unknown, vocabulary: FuzzVocabulary): fc.Arbitrary<unknown> | null {
  switch (name) {
    case "username":
    case "members":
      return mostly(vocabulary.usernames, ["ADA", "Bob", "zed", "new"]);
    case "email":
      return mostly(vocabulary.emails, ["new@example.com", "ADA@EXAMPLE.COM"]);
    case "uid":
      // A bulk file's (null allowed); a pushed user's takes its path's uid (see `requestsFor`).
      return fc.constantFrom(null, "3f1c2b9e-0000-4000-8000-000000000001", "uid-1");
    case "permissions":
      return fc.array(mostly(["signin", "staff", "admin", "masquerade"], ["user_update_permission", "unknown", "Staff"]), { maxLength: 4 });
    case "course_key":
      return mostly(vocabulary.courseKeys, ["course-v1:o+c+r", "o/c/r", "not a key"]);
    case "block_key":
      return mostly(vocabulary.blockKeys, ["block-v1:o+c+r+type@html+block@x", "i4x://o/c/html/x", "not a block"]);
    case "root_block":
      // Mostly empty (no root block): a block key fits one course only.
      return fc.oneof(
        { arbitrary: fc.constant(""), weight: 3 },
        { arbitrary: fc.constantFrom(...vocabulary.blockKeys), weight: 2 },
        { arbitrary: fc.constantFrom("block-v1:o+c+r+type@html+block@x", "i4x://o/c/html/x", "not a block"), weight: 1 },
      );
    case "role":
      return mostly(vocabulary.roles, ["beta_testers", "Staff"]);
    case "mode":
      return fc.constantFrom("audit", "verified", "aggregator", "excluded", "completable");
    case "type":
      return mostly(["chapter", "sequential", "vertical", "problem", "html", "video"], ["discussion", "library_content", "bad type"]);
    case "id":
      return type === "integer" ? fc.integer({ min: 1, max: 14 }) : mostly(["ch1", "s1", "v1", "p1", "p2", "h1", "vid1"], ["course", "p9", "new", "a:b"]);
    case "completion":
      return mostly([0, 0.25, 0.5, 1], [1.5, -0.1, 1e-300]);
    case "user_ids":
      return type === "array"
        ? fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 4 })
        : mostly(["1", "1,2", "2.3", "1,2,3,4,5"], ["1,,2", " 3 ", "x", "99999999999", ""]);
    case "requested_fields":
      return type === "array"
        ? fc.array(mostly(["chapter", "sequential", "vertical", "course", "mean", "username"], ["bogus", " chapter "]), { maxLength: 3 })
        : mostly(["chapter", "chapter,sequential,vertical", " mean , username ", "course", ""], ["bogus", "chapter,,bogus"]);
    case "page":
      return mostly(["1"], ["2", "0", "-1", "abc", "99999999999999999999", "1e3", " 1 "]);
    case "page_size":
      return mostly(["1", "10", "1000", "1001", "99999999999999999999"], ["0", "-1", "abc", "1.5"]);
    case "cohorts":
      return mostly(vocabulary.cohortIds.map(String), ["x", "-1", "2147483648", " 10 ", ""]);
    case "exclude_roles":
      return mostly(["staff", "staff,beta_testers", "unknown"], ["", ",,", " staff "]);
    case "mobile_only":
      return mostly(["true", "TRUE", "false"], ["1", ""]);
    default:
      return null;
  }
}

/**
 * Values for one schema: plausible ones (by field name where the scenario
 * knows the names, else by type), and, when `spoil` is set, now and then a
 * hostile string, a hostile number or a value of the wrong type instead.
 */
export class SchemaValues {
  readonly #components: Record<string, Schema>;
  readonly #vocabulary: FuzzVocabulary;

  constructor(document: OpenApiDocument, vocabulary: FuzzVocabulary) {
    this.#components = document.components?.schemas ?? {};
    this.#vocabulary = vocabulary;
  }

  /** An arbitrary of values for `schema`, the value of a field called `name`. */
  of(schema: Schema, name: string, spoil: boolean, depth = 0): fc.Arbitrary<unknown> {
    const plausible = this.#plausible(schema, name, spoil, depth);
    if (!spoil) return plausible;
    return fc.oneof({ arbitrary: plausible, weight: 12 }, { arbitrary: HOSTILE_TEXT, weight: 1 }, { arbitrary: HOSTILE_NUMBERS, weight: 1 }, { arbitrary: ANY_JSON, weight: 1 });
  }

  #resolve(schema: Schema): Schema {
    const ref = schema["$ref"];
    if (typeof ref !== "string") return schema;
    const target = this.#components[ref.replace("#/components/schemas/", "")];
    if (!target) throw new Error(`The document has no component ${ref}.`);
    return target;
  }

  #plausible(raw: Schema, name: string, spoil: boolean, depth: number): fc.Arbitrary<unknown> {
    const schema = this.#resolve(raw);
    const variants = (schema["anyOf"] ?? schema["oneOf"]) as Schema[] | undefined;
    if (variants) return fc.oneof(...variants.map((variant) => this.#plausible(variant, name, spoil, depth)));
    const type = schema["type"];
    const byName = plausibleByName(name, type, this.#vocabulary);
    if (byName && type !== "object" && (type !== "array" || name === "user_ids" || name === "requested_fields" || name === "permissions")) return byName;
    switch (type) {
      case "object":
        return this.#object(schema, name, spoil, depth);
      case "array": {
        // Course trees nest through arrays: keep the plausible ones shallow.
        const items = (schema["items"] ?? {}) as Schema;
        return depth > 4 ? fc.constant([]) : fc.array(this.of(items, name, spoil, depth + 1), { maxLength: 2 });
      }
      case "string":
        if (schema["format"] === "date-time") return DATES;
        if (Array.isArray(schema["enum"])) return fc.constantFrom(...(schema["enum"] as string[]));
        if (typeof schema["const"] === "string") return fc.constant(schema["const"]);
        return fc.oneof(fc.constantFrom("Group A", "Intro", "Grüße"), fc.string({ maxLength: 10 }));
      case "integer":
        return fc.integer({ min: typeof schema["minimum"] === "number" ? schema["minimum"] : -5, max: Math.min(typeof schema["maximum"] === "number" ? schema["maximum"] : 100, 100) });
      case "number":
        return fc.double({ min: 0, max: 1, noNaN: true });
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      default:
        return typeof schema["const"] === "string" ? fc.constant(schema["const"]) : ANY_JSON;
    }
  }

  #object(schema: Schema, name: string, spoil: boolean, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema["properties"] ?? {}) as Record<string, Schema>;
    const required = new Set((schema["required"] ?? []) as string[]);
    const entries = Object.entries(properties);
    if (entries.length === 0) {
      // A record such as a batch's `blocks`: block keys to completion values.
      const blockKeys = fc.constantFrom(...this.#vocabulary.blockKeys);
      const keys = name === "blocks" ? (spoil ? fc.oneof({ arbitrary: blockKeys, weight: 4 }, { arbitrary: HOSTILE_TEXT, weight: 1 }) : blockKeys) : fc.string({ maxLength: 6 });
      const values = name === "blocks" ? (plausibleByName("completion", "number", this.#vocabulary) as fc.Arbitrary<unknown>) : ANY_JSON;
      return fc.dictionary(keys, spoil ? fc.oneof({ arbitrary: values, weight: 8 }, { arbitrary: ANY_JSON, weight: 1 }) : values, { maxKeys: 4 });
    }
    if (name === "users" && !spoil) {
      // A bulk file's users: mostly the stored ones as they are, else a new one, or a stored one renamed (and back).
      const known = this.#vocabulary.users;
      return mostly(known, [
        ...known.map((user) => ({ id: user.id + 100, username: `${user.username}2`, email: `${user.username}2@example.com` })),
        ...known.map((user) => ({ ...user, username: `${user.username}_renamed` })),
      ]);
    }
    const shape: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [key, property] of entries) shape[key] = this.of(property, key, spoil, depth + 1);
    const requiredKeys = entries.map(([key]) => key).filter((key) => required.has(key));
    const record = fc.record(shape, { requiredKeys });
    if (!spoil && "course_key" in properties && "blocks" in properties) {
      // A plausible batch names blocks of its own course: the course first, then blocks of it.
      return plausibleByName("course_key", "string", this.#vocabulary)!.chain((courseKey) => {
        const own = this.#vocabulary.blocksByCourse[courseKey as string] ?? [];
        if (own.length === 0) return record;
        const blocks = fc.dictionary(fc.constantFrom(...own), plausibleByName("completion", "number", this.#vocabulary)!, { minKeys: 1, maxKeys: 4 });
        const aligned: Record<string, fc.Arbitrary<unknown>> = { ...shape, course_key: fc.constant(courseKey), blocks };
        return fc.record(aligned, { requiredKeys });
      });
    }
    if (!spoil) return record;
    // Now and then a property the schema does not know, or one it requires left out.
    return fc.oneof(
      { arbitrary: record, weight: 10 },
      { arbitrary: fc.tuple(record, fc.string({ maxLength: 8 }), ANY_JSON).map(([value, key, extra]) => ({ ...(value as object), [key]: extra })), weight: 1 },
      { arbitrary: fc.record(shape, { requiredKeys: [] }), weight: 1 },
    );
  }
}

/** Percent-encodes text as a browser would, and an unpaired surrogate as the (invalid) UTF-8 of its code unit. */
export function percentEncode(text: string): string {
  let out = "";
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    else out += encodeURIComponent(character);
  }
  return out;
}

/** Query-string pieces that no encoder writes: invalid or overlong escapes, empty names, stray separators. */
const RAW_QUERY_PIECES = fc.constantFrom("%", "%ZZ", "%0", "%00=1", "username=%C0%80", "username=%ED%A0%80", "page=%2B1", "&&", "=x", "username", "username=a%", "%E0%A4%A");

/** Path segments for `{course_key}` that are not course keys. */
const HOSTILE_PATH_KEYS = fc.constantFrom("%00", "course-v1:a%00+b+c", "%ZZ", "course-v1:a%ED%A0%80+b+c", "%C0%80", "a".repeat(1200), "..%2F..", "%2F", "course-v1:a+b", "%F0%9F%98%80");

const CONTENT_TYPES = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=latin1",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonx",
  "",
);

/** Bodies that are not a JSON value of any schema: broken JSON, deep nesting, bytes that are not UTF-8, oversized text. */
const RAW_BODIES: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.constantFrom("", "{", "null", "[]", "0", "1e400", '"text"', '{"a":1,"a":2}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
  fc.integer({ min: 200, max: 6000 }).map((levels) => `${"[".repeat(levels)}${"]".repeat(levels)}`),
  fc.integer({ min: 200, max: 3000 }).map((levels) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`),
  fc.integer({ min: 200, max: 3000 }).map((levels) => {
    let block = '{"type":"problem","id":"leaf"}';
    for (let level = 0; level < levels; level += 1) block = `{"type":"vertical","id":"v${level}","children":[${block}]}`;
    return `{"courses":[{"course_key":"o/c/r","structure":${block}}]}`;
  }),
  fc.constantFrom(Buffer.from([0x7b, 0x22, 0x75, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), Buffer.from('{"username":"ada\u0000"}')),
  fc.constant("x".repeat(1_100_000)),
);

const ANY_CALLER = fc.constantFrom<FuzzCaller>("staff", "admin", "learner", "masquerade", "push", "metrics", "none", "unknown-token", "oversized-token", "malformed-header", "latin1-header");

/** Content encodings the service does not decode, now and then on a spoiled request. */
const CONTENT_ENCODINGS = fc.oneof(
  { arbitrary: fc.constant<Record<string, string>>({}), weight: 6 },
  { arbitrary: fc.constantFrom("gzip", "br", "deflate", "identity", "x-unknown", "gzip, gzip").map((encoding) => ({ "content-encoding": encoding })), weight: 1 },
);

/** A path parameter's value: as it goes in the path, and as the route reads it (null when that is not the point). */
interface PathValue {
  readonly encoded: string;
  readonly decoded: string | null;
}

type Body =
  | { readonly kind: "none" }
  | { readonly kind: "json"; readonly contentType: string | null; readonly value: unknown }
  | { readonly kind: "raw"; readonly contentType: string | null; readonly payload: string | Buffer };

/** A pushed user names the user of its path (`PUT /users/{uid}`): a plausible push says the same uid in both. */
function withPathUid(value: unknown, uid: string): unknown {
  if (typeof value !== "object" || value === null || !("user" in value)) return value;
  const user = (value as { user: unknown }).user;
  if (typeof user !== "object" || user === null || Array.isArray(user)) return value;
  return { ...value, user: { ...user, uid } };
}

/**
 * Requests for one route: three in five plausible (one of the route's
 * callers, known path parameters, well-formed parameters and body drawn
 * from the scenario), two in five spoiled anywhere: caller, path, query,
 * body, content type and content encoding.
 */
export function requestsFor(route: FuzzRoute, values: SchemaValues, vocabulary: FuzzVocabulary): fc.Arbitrary<FuzzRequest> {
  const build = (spoiled: boolean): fc.Arbitrary<FuzzRequest> => {
    const pathValue = (param: string): fc.Arbitrary<PathValue> => {
      const known = (param === "uid" ? mostly(vocabulary.signonUids, ["3f1c2b9e-0000-4000-8000-000000000001", "x"]) : mostly(vocabulary.courseKeys, ["course-v1:o+c+r", "o/c/r"])).map(
        (value): PathValue => ({ encoded: param === "uid" ? percentEncode(value) : value, decoded: value }),
      );
      if (!spoiled) return known;
      return fc.oneof(
        { arbitrary: known, weight: 4 },
        { arbitrary: HOSTILE_PATH_KEYS.map((encoded): PathValue => ({ encoded, decoded: null })), weight: 1 },
        { arbitrary: HOSTILE_TEXT.map((text): PathValue => ({ encoded: percentEncode(text), decoded: text })), weight: 1 },
      );
    };
    const pathValues = fc.tuple(...route.params.map(pathValue));
    const parameters = fc.tuple(
      ...route.query.map((parameter) =>
        fc.oneof(
          { arbitrary: fc.constant<string[]>([]), weight: 2 },
          {
            arbitrary: fc.tuple(values.of(parameter.schema ?? {}, parameter.name, spoiled), fc.nat({ max: 9 })).map(([value, roll]) => {
              const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
              const piece = `${parameter.name}=${percentEncode(text)}`;
              return spoiled && roll === 0 ? [piece, piece] : [piece];
            }),
            weight: 1,
          },
        ),
      ),
    );
    const rawPieces = spoiled ? fc.array(RAW_QUERY_PIECES, { maxLength: 2 }) : fc.constant<string[]>([]);
    const json = (spoil: boolean, contentType: fc.Arbitrary<string | null> = fc.constant("application/json")) =>
      fc.tuple(contentType, values.of(route.body ?? {}, "", spoil)).map(([type, value]): Body => ({ kind: "json", contentType: type, value }));
    const raw = (contentTypes: fc.Arbitrary<string>) => fc.tuple(contentTypes, RAW_BODIES).map(([contentType, payload]): Body => ({ kind: "raw", contentType, payload }));
    const none = fc.constant<Body>({ kind: "none" });
    const body: fc.Arbitrary<Body> =
      route.body === null
        ? spoiled
          ? fc.oneof({ arbitrary: none, weight: 3 }, { arbitrary: raw(CONTENT_TYPES), weight: 1 })
          : none
        : spoiled
          ? fc.oneof(
              { arbitrary: json(true), weight: 6 },
              { arbitrary: raw(fc.oneof(fc.constant("application/json"), CONTENT_TYPES)), weight: 2 },
              { arbitrary: json(false, CONTENT_TYPES.map((type) => (type === "" ? null : type))), weight: 1 },
            )
          : json(false);
    const caller = spoiled ? ANY_CALLER : fc.constantFrom(...route.callers);
    const headers = spoiled ? CONTENT_ENCODINGS : fc.constant<Record<string, string>>({});
    const aligned = spoiled ? fc.boolean() : fc.constant(true);
    return fc.tuple(pathValues, parameters, rawPieces, body, caller, headers, aligned).map(([path, pieces, rawQuery, content, who, extra, align]) => {
      let url = route.template;
      route.params.forEach((param, index) => (url = url.replace(`{${param}}`, path[index]!.encoded)));
      const queryText = [...pieces.flat(), ...rawQuery].join("&");
      const uid = path[route.params.indexOf("uid")]?.decoded ?? null;
      const payload =
        content.kind === "none" ? null : content.kind === "raw" ? content.payload : (JSON.stringify(align && uid !== null ? withPathUid(content.value, uid) : content.value) ?? "null");
      return {
        route: route.name,
        method: route.method,
        url: queryText === "" ? url : `${url}?${queryText}`,
        caller: who,
        contentType: content.kind === "none" ? null : content.contentType,
        headers: extra,
        payload,
      };
    });
  };
  return fc.oneof({ arbitrary: build(false), weight: 3 }, { arbitrary: build(true), weight: 2 });
}
