import fc from "fast-check";
import type { RouteOptions } from "fastify";

/**
 * Requests for the editorial application's fuzz test, derived from the routes
 * it registers (an `onRoute` hook collects them): path parameters, query
 * fields and JSON bodies get plausible values (the stand-in Sign-on's users,
 * a push body that matches its path), and every part can be spoiled with
 * NUL characters, unpaired surrogates, invalid percent-encoding and UTF-8,
 * huge strings, repeated keys, wrong types, deep JSON, wrong content types
 * and oversized bodies.
 */

type Schema = Record<string, unknown>;

/** A route the app registered. */
export interface FuzzRoute {
  readonly name: string;
  readonly method: "GET" | "PUT" | "POST";
  readonly url: string;
  readonly query: readonly string[];
  /** Whether it takes a JSON body (a push of a user). */
  readonly userBody: boolean;
}

/** Who sends a request: a signed-in editor or admin, nobody, or a cookie that names nothing. */
export type FuzzCaller = "editor" | "admin" | "none" | "stale-cookie" | "junk-cookie";
/** The `Authorization` header: Sign-on's push credential, an editor's bearer token, or a broken one. */
export type FuzzAuthorization = "push" | "editor-token" | "none" | "unknown-token" | "malformed";

export interface FuzzRequest {
  readonly route: string;
  readonly method: "GET" | "PUT" | "POST" | "HEAD";
  /** The path with `{uid}` for the user the request is about. */
  readonly path: string;
  /** A known user (an index into the scenario's users), or raw text for the uid. */
  readonly uid: { readonly known: number } | { readonly raw: string };
  readonly query: string;
  readonly caller: FuzzCaller;
  readonly authorization: FuzzAuthorization;
  readonly contentType: string | null;
  /** `{uid}` in a body stands for the same user as in the path. */
  readonly payload: string | Buffer | null;
}

/** The routes to fuzz; throws for one the test cannot make requests for (a path parameter other than `:uid`, another method). */
export function fuzzRoutes(registered: readonly RouteOptions[]): FuzzRoute[] {
  const routes: FuzzRoute[] = [];
  const problems: string[] = [];
  for (const options of registered) {
    for (const method of [options.method].flat()) {
      if (method === "HEAD") continue;
      if (method !== "GET" && method !== "PUT" && method !== "POST") {
        problems.push(`${method} ${options.url}: a method the fuzz test does not send`);
        continue;
      }
      const params = [...options.url.matchAll(/:(\w+)/g)].map((match) => match[1]);
      if (params.some((param) => param !== "uid")) problems.push(`${method} ${options.url}: a path parameter the fuzz test does not know`);
      const schema = (options.schema ?? {}) as Record<string, Schema | undefined>;
      routes.push({
        name: `${method} ${options.url}`,
        method: method as FuzzRoute["method"],
        url: options.url,
        query: Object.keys((schema["querystring"]?.["properties"] ?? {}) as Schema),
        userBody: schema["body"] !== undefined,
      });
    }
  }
  if (problems.length > 0) throw new Error(`Routes the fuzz test does not cover:\n${problems.join("\n")}`);
  return routes;
}

const LONE_SURROGATES = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** Strings that have broken services: NUL (which no text column holds), unpaired surrogates, sizes, look-alike values. */
const HOSTILE_TEXT: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom("\u0000", "a\u0000b", "editor\u0000@example.org", "\u0000\u0000", "admin\u0000"), weight: 2 },
  { arbitrary: fc.constantFrom("\uD800", "x\uDBFF", "\uDC00", "", " ", "null", "-1", "1e400", "__proto__", "'; drop table signon_client.users; --", "\u202Eevil", "😀", "\r\n", "x".repeat(300), "é".repeat(1100)), weight: 2 },
  { arbitrary: LONE_SURROGATES, weight: 1 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 10 }), weight: 1 },
  { arbitrary: fc.string({ unit: fc.oneof(LONE_SURROGATES, fc.constantFrom("\u0000", "a", "%", "\uD83D\uDE00")), maxLength: 6 }), weight: 1 },
);

/** Percent-encodes text as a browser would, and an unpaired surrogate as the (invalid) UTF-8 of its code unit. */
function percentEncode(text: string): string {
  let out = "";
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    } else out += encodeURIComponent(character);
  }
  return out;
}

const RAW_QUERY_PIECES = fc.constantFrom("%", "%ZZ", "%00=1", "code=%C0%80", "state=%ED%A0%80", "return_to=%FF", "&&", "=x", "code", "%E0%A4%A", "return_to=a&return_to=b");
const HOSTILE_SEGMENTS = fc.constantFrom("%00", "a%00b", "%ZZ", "%", "%E0%A4%A", "%ED%A0%80", "%C0%80", "%FF", "a".repeat(300), "..%2F..", "%2F", "%20");

function plausibleQuery(name: string): fc.Arbitrary<string> {
  switch (name) {
    case "return_to":
      return fc.constantFrom("/", "/admin", "https://evil.example/", "//evil.example", "/\\evil.example", "javascript:alert(1)");
    case "code":
      return fc.constantFrom("nope", "c".repeat(64));
    case "state":
      return fc.constantFrom("nope", "s".repeat(43));
    case "error":
      return fc.constantFrom("access_denied", "server_error");
    default:
      return fc.constant("x");
  }
}

/** A pushed user: plausible for the uid in the path (`{uid}`), or spoiled: one field hostile text or of a wrong type, or no user at all. */
function userBody(spoil: boolean): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(fc.jsonValue({ maxDepth: 2 }), HOSTILE_TEXT, fc.constantFrom(1e308, -1, true, null));
  const user = fc.record(
    {
      uid: fc.constant("{uid}"),
      name: fc.constantFrom("Editor", "Zoë Ünïcode", "<script>alert(1)</script>"),
      email: fc.constantFrom("editor@example.org", "x@y"),
      permissions: fc.array(fc.constantFrom("signin", "admin", "editor"), { maxLength: 3 }),
      organisation_slug: fc.constantFrom("cabinet-office", null),
      organisation_content_id: fc.constantFrom("96ae61d6-c2a1-48cb-8e67-da9d105ae381", null),
      disabled: fc.boolean(),
    },
    { requiredKeys: ["uid", "name", "email", "permissions"] },
  );
  if (!spoil) return user.map((value) => ({ user: value }));
  const field = fc.constantFrom("uid", "name", "email", "permissions", "organisation_slug", "organisation_content_id", "disabled");
  return fc.oneof(
    {
      arbitrary: fc.tuple(user, field, HOSTILE_TEXT).map(([value, key, text]) => ({ user: { ...value, [key]: key === "permissions" ? ["signin", text] : text } })),
      weight: 6,
    },
    { arbitrary: fc.tuple(user, field, wrong).map(([value, key, odd]) => ({ user: { ...value, [key]: odd } })), weight: 2 },
    { arbitrary: user.map(({ uid: _uid, ...value }) => ({ user: value })), weight: 1 },
    { arbitrary: wrong, weight: 1 },
  );
}

const RAW_BODIES: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.constantFrom("", "{", "null", "[]", '{"user":', '{"__proto__":{"user":{}}}', '{"user":{"uid":"a","uid":"b"}}'),
  fc.integer({ min: 200, max: 6000 }).map((levels) => `${"[".repeat(levels)}${"]".repeat(levels)}`),
  fc.integer({ min: 200, max: 3000 }).map((levels) => `{"user":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}`),
  fc.constantFrom(Buffer.from([0x7b, 0x22, 0x75, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), Buffer.from('{"user":{"uid":"a\u0000"}}')),
  fc.constant(`{"user":{"name":"${"x".repeat(1_100_000)}"}}`),
);

const CONTENT_TYPES = fc.constantFrom("application/json", "application/json; charset=latin1", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "");

/** Requests for every route; a route that takes a body gets three times the share of one that does not, as it has more to spoil. */
export function requestsForAll(routes: readonly FuzzRoute[]): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...routes.map((route) => ({ arbitrary: requestsFor(route), weight: route.userBody ? 3 : 1 })));
}

/** Requests for one route: three in five plausible, two in five spoiled anywhere. */
export function requestsFor(route: FuzzRoute): fc.Arbitrary<FuzzRequest> {
  const build = (spoil: boolean): fc.Arbitrary<FuzzRequest> => {
    const uid: fc.Arbitrary<FuzzRequest["uid"]> = spoil
      ? fc.oneof({ arbitrary: fc.nat({ max: 9 }).map((known) => ({ known })), weight: 3 }, { arbitrary: fc.oneof(HOSTILE_SEGMENTS, HOSTILE_TEXT.map(percentEncode)).map((raw) => ({ raw })), weight: 2 })
      : fc.nat({ max: 9 }).map((known) => ({ known }));
    const pieces = fc.tuple(
      ...route.query.map((name) =>
        fc.oneof(
          { arbitrary: fc.constant<string[]>([]), weight: 1 },
          {
            arbitrary: fc.tuple(spoil ? fc.oneof(plausibleQuery(name), HOSTILE_TEXT) : plausibleQuery(name), fc.nat({ max: 5 })).map(([value, roll]) => {
              const piece = `${name}=${percentEncode(value)}`;
              return spoil && roll === 0 ? [piece, piece] : [piece];
            }),
            weight: 2,
          },
        ),
      ),
    );
    const raw = spoil ? fc.array(RAW_QUERY_PIECES, { maxLength: 2 }) : fc.constant<string[]>([]);
    const json = (spoiled: boolean) => userBody(spoiled).map((value) => ({ contentType: "application/json" as string | null, payload: JSON.stringify(value) as string | Buffer | null }));
    const body = route.userBody
      ? spoil
        ? fc.oneof({ arbitrary: json(true), weight: 4 }, { arbitrary: fc.tuple(CONTENT_TYPES, RAW_BODIES).map(([contentType, payload]) => ({ contentType: contentType === "" ? null : contentType, payload })), weight: 2 })
        : json(false)
      : spoil
        ? fc.oneof({ arbitrary: fc.constant({ contentType: null, payload: null }), weight: 3 }, { arbitrary: fc.tuple(CONTENT_TYPES, RAW_BODIES).map(([contentType, payload]) => ({ contentType: contentType === "" ? null : contentType, payload })), weight: 1 })
        : fc.constant({ contentType: null as string | null, payload: null as string | Buffer | null });
    const push = route.url.includes("/api/users/");
    const usualCaller = push ? fc.constant<FuzzCaller>("none") : fc.constantFrom<FuzzCaller>("editor", "admin", "admin");
    const usualAuthorization = push ? fc.constant<FuzzAuthorization>("push") : route.url === "/api/me" ? fc.constant<FuzzAuthorization>("editor-token") : fc.constant<FuzzAuthorization>("none");
    // A spoiled request mostly keeps the caller it is for, so the spoiled parts get past the guards.
    const caller = spoil ? fc.oneof({ arbitrary: usualCaller, weight: 2 }, { arbitrary: fc.constantFrom<FuzzCaller>("editor", "admin", "none", "stale-cookie", "junk-cookie"), weight: 1 }) : usualCaller;
    const authorization = spoil
      ? fc.oneof({ arbitrary: usualAuthorization, weight: 2 }, { arbitrary: fc.constantFrom<FuzzAuthorization>("push", "editor-token", "none", "unknown-token", "malformed"), weight: 1 })
      : usualAuthorization;
    const method = spoil && route.method === "GET" ? fc.constantFrom<"GET" | "HEAD">("GET", "GET", "HEAD") : fc.constant(route.method);
    return fc.tuple(method, uid, pieces, raw, body, caller, authorization).map(([verb, who, query, rawPieces, { contentType, payload }, from, auth]) => ({
      route: route.name,
      method: verb,
      path: route.url.replace(":uid", "{uid}"),
      uid: who,
      query: [...query.flat(), ...rawPieces].join("&"),
      caller: from,
      authorization: auth,
      contentType,
      payload,
    }));
  };
  return fc.oneof({ arbitrary: build(false), weight: 3 }, { arbitrary: build(true), weight: 2 });
}
