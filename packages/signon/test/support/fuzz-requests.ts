import { createHash } from "node:crypto";
import fc from "fast-check";
import type { RouteOptions } from "fastify";

/**
 * Requests for the fuzz test, derived from the routes the app registers (an
 * `onRoute` hook collects them with their schemas): every route's path
 * parameters, query fields and form fields get plausible values (by field
 * name, drawn from the scenario's users, applications and harvested codes and
 * tokens, so that requests get past validation and reach the database), and
 * each part can be spoiled: NUL characters, unpaired surrogates, invalid
 * percent-encoding and UTF-8, huge strings and numbers, repeated keys, wrong
 * types, deep JSON, wrong content types and oversized bodies.
 */

type Schema = Record<string, unknown>;

/** A value to be looked up when the request is sent: the scenario changes as the run goes on (codes, tokens, new users). */
export interface Ref {
  readonly ref: RefName;
  /** Which one of the candidates, modulo their number. */
  readonly pick: number;
}

/** What a `Ref` can stand for. */
export type RefName =
  | "csrf"
  | "user"
  | "apiUser"
  | "application"
  | "organisation"
  | "grant"
  | "push"
  | "invitationToken"
  | "resetToken"
  | "unlockToken"
  | "emailChangeToken"
  | "invitationBatch"
  | "permissionBox"
  | "clientId"
  | "clientSecret"
  | "redirectUri"
  | "code"
  | "accessToken"
  | "refreshToken"
  | "idToken"
  | "victimEmail"
  | "auditEvent"
  | "passkey";

/** A field's value: text as it is, or a reference resolved when the request is sent. */
export type FieldValue = string | Ref;

/** A route the app registered, with what the fuzz test derives requests from. */
export interface FuzzRoute {
  /** `METHOD /path/:param`, as the report names it. */
  readonly name: string;
  readonly method: "GET" | "POST";
  readonly url: string;
  readonly params: readonly string[];
  /** Query fields: the schema's properties, or for an open query schema the fields the endpoint reads. */
  readonly query: readonly string[];
  readonly body: readonly string[] | null;
  /** Fields a plausible request sends every time. */
  readonly required: readonly string[];
}

/** Who sends a request: which cookies and which `Authorization` header. */
export type FuzzCaller = "admin" | "normal" | "visitor" | "none" | "stale-session" | "junk-cookie";
export type FuzzAuthorization = "none" | "basic-client" | "basic-junk" | "bearer" | "bearer-junk" | "bearer-malformed";

/** One request, with its values still to be resolved. */
export interface FuzzRequest {
  readonly route: string;
  readonly method: "GET" | "POST" | "HEAD";
  /** Path segments and query pieces, each text or a reference; `encode` says whether to percent-encode a resolved value. */
  readonly path: readonly UrlPart[];
  readonly query: readonly QueryPiece[];
  readonly caller: FuzzCaller;
  readonly authorization: FuzzAuthorization;
  readonly body: FuzzBody;
}

export type UrlPart = { readonly raw: string } | { readonly value: FieldValue };
export type QueryPiece = { readonly raw: string } | { readonly name: string; readonly value: FieldValue };

/** A body: form fields (resolved, then encoded), JSON of the fields, or raw bytes. */
export type FuzzBody =
  | { readonly kind: "none" }
  | { readonly kind: "form"; readonly contentType: string | null; readonly fields: readonly QueryPiece[] }
  | { readonly kind: "json"; readonly contentType: string | null; readonly value: unknown }
  | { readonly kind: "raw"; readonly contentType: string | null; readonly payload: string | Buffer };

/** The fields an open query schema (`patternProperties`) stands for, by route. */
const OPEN_QUERY_FIELDS: Record<string, readonly string[]> = {
  "/oauth/authorize": ["response_type", "client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method", "nonce", "prompt", "max_age", "login_hint"],
  "/authorize": ["response_type", "client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method", "nonce", "prompt", "max_age", "login_hint"],
  "/user.json": ["access_token", "client_id"],
  "/userinfo": ["access_token"],
};

/** Fields a plausible request always sends, where the schema requires none (OAuth endpoints check them in code). */
const PLAUSIBLY_REQUIRED: Record<string, readonly string[]> = {
  "/oauth/authorize": ["response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method"],
  "/authorize": ["response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method"],
  "/oauth/revoke": ["token", "client_id", "client_secret"],
  "/oauth/introspect": ["token", "client_id", "client_secret"],
};

/** What a path parameter names, by the route's first segment and the parameter's name. */
const PATH_REFS: Record<string, RefName> = {
  "invitations:token": "invitationToken",
  "password-reset:token": "resetToken",
  "unlock:token": "unlockToken",
  "account:token": "emailChangeToken",
  "account:id": "application",
  "account:passkeyId": "passkey",
  "users:uid": "user",
  "users:id": "invitationBatch",
  "applications:id": "application",
  "applications:pushId": "push",
  "api-users:uid": "apiUser",
  "api-users:grantId": "grant",
  "organisations:id": "organisation",
  // No organisation of the fuzz scenario has its own provider: an id that names none.
  "sign-in:providerId": "organisation",
};

function fieldsOf(schema: Schema | undefined): string[] {
  return Object.keys((schema?.["properties"] ?? {}) as Record<string, unknown>);
}

/**
 * The routes to fuzz, from the options of every route registered (HEAD routes
 * are GET routes sent with HEAD now and then). Throws for a route the test
 * cannot make plausible requests for: a path parameter or an open query
 * schema it does not know, or a method it does not send.
 */
export function fuzzRoutes(registered: readonly RouteOptions[]): FuzzRoute[] {
  const routes: FuzzRoute[] = [];
  const problems: string[] = [];
  for (const options of registered) {
    for (const method of [options.method].flat()) {
      if (method === "HEAD") continue;
      if (method !== "GET" && method !== "POST") {
        problems.push(`${method} ${options.url}: a method the fuzz test does not send`);
        continue;
      }
      const schema = (options.schema ?? {}) as Record<string, Schema | undefined>;
      const params = [...options.url.matchAll(/:(\w+)/g)].map((match) => match[1] as string);
      const segment = options.url.split("/")[1] ?? "";
      for (const param of params) if (PATH_REFS[`${segment}:${param}`] === undefined) problems.push(`${method} ${options.url}: the path parameter ${param} is unknown to the fuzz test`);
      const querySchema = schema["querystring"];
      const open = querySchema !== undefined && querySchema["patternProperties"] !== undefined;
      if (open && OPEN_QUERY_FIELDS[options.url] === undefined) problems.push(`${method} ${options.url}: an open query schema whose fields the fuzz test does not know`);
      routes.push({
        name: `${method} ${options.url}`,
        method: method as "GET" | "POST",
        url: options.url,
        params,
        query: open ? (OPEN_QUERY_FIELDS[options.url] ?? []) : fieldsOf(querySchema),
        body: method === "POST" ? fieldsOf(schema["body"]) : null,
        // Forms whose schema leaves `_csrf` optional still refuse a post without it.
        required: [...((schema["body"]?.["required"] ?? []) as string[]), ...(PLAUSIBLY_REQUIRED[options.url] ?? []), ...(method === "POST" && fieldsOf(schema["body"]).includes("_csrf") ? ["_csrf"] : [])],
      });
    }
  }
  if (problems.length > 0) throw new Error(`Routes the fuzz test does not cover:\n${problems.join("\n")}`);
  return routes;
}

const ref = (name: RefName): fc.Arbitrary<Ref> => fc.nat({ max: 1000 }).map((pick) => ({ ref: name, pick }));

const LONE_SURROGATES = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** Strings that have broken services: control characters, unpaired surrogates, injection, sizes, look-alike numbers and dates. */
export const HOSTILE_TEXT: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "ada\u0000",
    "\u0000@example.com",
    "%00",
    "\uD800",
    "ada\uDBFF@example.com",
    "\uDC00",
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
    "'; drop table signon.users; --",
    "../../etc/passwd",
    "\u202Eevil",
    "😀",
    "\r\n",
    "0000-01-01T00:00:00Z",
    "+294277-01-01T00:00:00Z",
    "x".repeat(300),
    "é".repeat(1100),
    "a".repeat(5000),
    "00000000-0000-0000-0000-000000000000",
    "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
  ),
  LONE_SURROGATES,
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: fc.oneof(LONE_SURROGATES, fc.constantFrom("\u0000", "a", "%", ":", "\uFFFF", "\uD83D\uDE00")), maxLength: 8 }),
);

/** Mostly one of `usual`, now and then one of `odd`. */
function mostly(usual: readonly FieldValue[], odd: readonly FieldValue[]): fc.Arbitrary<FieldValue> {
  return fc.oneof({ arbitrary: fc.constantFrom(...usual), weight: 4 }, { arbitrary: fc.constantFrom(...odd), weight: 1 });
}

const NEW_PASSWORD = "a new and long enough passphrase 42";
const CODE_VERIFIER = "a".repeat(43);
const CODE_CHALLENGE = createHash("sha256").update(CODE_VERIFIER).digest("base64url");

/** The key of a row in a keyset-paged list (`<base64url of a text>.<uid>`), now and then broken. */
function rowKeys(): fc.Arbitrary<FieldValue> {
  const uid = "3f1c2b9e-0000-4000-8000-000000000001";
  return mostly(
    [`${Buffer.from("ada lovelace").toString("base64url")}.${uid}`, `.${uid}`, `${Buffer.from("zoë ünïcode").toString("base64url")}.${uid}`],
    ["abc", uid, `${"A".repeat(3000)}.${uid}`, `%FF.${uid}`, `${Buffer.from("a\u0000b").toString("base64url")}.${uid}`],
  );
}

/** Plausible values of a field by its name; generic text for a name the scenario does not know. */
function plausible(name: string, route: FuzzRoute, defaultPassword: string): fc.Arbitrary<FieldValue> {
  switch (name) {
    case "_csrf":
      return fc.oneof({ arbitrary: ref("csrf"), weight: 9 }, { arbitrary: fc.constantFrom("x", ""), weight: 1 });
    case "email": {
      // Someone's address where a form looks an account up; mostly a new one where it creates or changes one.
      const known = /^\/(sign-in|password-reset)/.test(route.url);
      return fc.oneof(
        { arbitrary: ref("victimEmail"), weight: known ? 4 : 1 },
        { arbitrary: fc.nat({ max: 500 }).map((n) => `fuzz-${n}@example.org`), weight: known ? 1 : 4 },
        { arbitrary: fc.constantFrom("NOT-AN-EMAIL", "a@b", "Ada@Example.ORG "), weight: 1 },
      );
    }
    case "password":
      return route.url === "/sign-in" ? mostly([defaultPassword], [NEW_PASSWORD, "password", ""]) : mostly([NEW_PASSWORD], [defaultPassword, "password", "short", ""]);
    case "confirmation":
      return mostly([NEW_PASSWORD], [defaultPassword, "password", ""]);
    case "current":
      return mostly([defaultPassword], [NEW_PASSWORD, ""]);
    case "name":
      return route.url.startsWith("/applications") ? fc.nat({ max: 30 }).map((n) => `Fuzz app ${n}`) : mostly(["Ada Lovelace", "Grace Hopper", "Zoë Ünïcode"], ["", " "]);
    case "role":
      return mostly(route.method === "GET" ? ["", "normal", "admin", "super_organisation_admin"] : ["normal", "organisation_admin", "super_organisation_admin", "admin"], ["superadmin", "bogus", ""]);
    case "organisation":
      return fc.oneof({ arbitrary: ref("organisation"), weight: 3 }, { arbitrary: fc.constantFrom("", "none", "not-a-uuid"), weight: 1 });
    case "parent":
      // An organisation's parent: another one, itself (a loop), none, or not an id.
      return fc.oneof({ arbitrary: ref("organisation"), weight: 3 }, { arbitrary: fc.constantFrom("", "not-a-uuid", "00000000-0000-4000-8000-000000000000"), weight: 1 });
    case "closed":
      return mostly(["", "yes"], ["no", "on"]);
    case "status":
      return mostly(["", "active", "suspended", "locked"], ["bogus"]);
    case "q":
      return mostly(["ada", "example", ""], ["%", "_", "\\"]);
    case "page":
      return mostly(["1", "2"], ["0", "-1", "abc", "9999999", "1e3"]);
    case "after":
      // The pushes page's "next page" carries a push id; the users and API users lists a row key.
      if (route.url.endsWith("/pushes")) return mostly(["1", "2", "999999"], ["0", "-1", "abc", "99999999999999999999"]);
      return rowKeys();
    case "last":
      return mostly(["yes"], ["no", ""]);
    case "before":
      // The users list's keyset links carry a row key; the event logs' "older events" links an event id.
      if (["/users", "/users.csv", "/api-users"].includes(route.url)) return rowKeys();
      return fc.oneof({ arbitrary: ref("auditEvent"), weight: 4 }, { arbitrary: fc.constantFrom("0", "-1", "abc", "999999999999999", "99999999999999999999", "1e3"), weight: 1 });
    case "new_password":
      return mostly(["yes", "no"], ["maybe", ""]);
    case "reason":
      return mostly(["Left the team", "Asked to"], ["", "r".repeat(600)]);
    case "permissions":
      return route.url.startsWith("/users/")
        ? fc.oneof({ arbitrary: ref("permissionBox"), weight: 4 }, { arbitrary: fc.constantFrom("nope:signin", "signin", ":"), weight: 1 })
        : mostly(["signin", "editor\nwriter", "editor, admin"], ["", "a".repeat(300)]);
    case "rows":
      // The batch invitation form's pasted rows: a CSV file's text, now and then broken.
      return mostly(
        ["Ada Lovelace,ada-batch@example.org", "Name,Email,Organisation\nGrace,grace-batch@example.org,organisation-1\nBob,bob@example.org"],
        ['"unclosed,quote@example.org', "one column", "a,b,c,d,e", "", "x".repeat(3000) + ",long@example.org"],
      );
    case "file":
      return mostly(["people.csv"], ["", "../../etc/passwd"]);
    case "delegatable_permissions":
    case "default_permissions":
    case "permissions_not_grantable_in_ui":
      return mostly(["", "editor", "signin"], ["unknown", "Signin"]);
    case "api_only":
      return mostly(["", "yes"], ["no", "on"]);
    case "push_enabled":
    case "token_auto_renewal":
      return mostly(["yes", "no"], ["", "on", "maybe"]);
    case "redirect_uris":
      return mostly(["https://fuzz.example/auth/callback", "https://a.example/cb\nhttps://b.example/cb"], ["not a uri", "http://insecure.example/cb", "javascript:alert(1)"]);
    case "home_uri":
    case "push_base_url":
      return mostly(["", "https://fuzz.example"], ["not a uri", "ftp://fuzz.example"]);
    case "require_pkce":
      return mostly(["", "yes"], ["no", "on"]);
    case "application_id":
      return fc.oneof({ arbitrary: ref("application"), weight: 4 }, { arbitrary: fc.constantFrom("", "nope"), weight: 1 });
    case "expires_in_days":
      return mostly(["30", "1"], ["0", "-1", "99999999999", "1e3", "1.5"]);
    case "slug":
      return fc.oneof(fc.nat({ max: 30 }).map((n) => `fuzz-${n}`), fc.constantFrom("UPPER", "with space", ""));
    case "content_id":
      return mostly(["", "3f1c2b9e-0000-4000-8000-000000000001"], ["not-a-uuid"]);
    case "code":
      return route.url.includes("token") ? fc.oneof({ arbitrary: ref("code"), weight: 4 }, { arbitrary: fc.constantFrom("nope", ""), weight: 1 }) : mostly(["123456", "000000"], ["12345", "abcdef"]);
    case "remember":
      return mostly(["yes"], ["no"]);
    case "return_to":
      return mostly(["/account", "/users"], ["https://evil.example/", "//evil.example", "/\\evil.example"]);
    case "grant_type":
      return mostly(["authorization_code", "refresh_token"], ["client_credentials", "password", ""]);
    case "redirect_uri":
      return fc.oneof({ arbitrary: ref("redirectUri"), weight: 4 }, { arbitrary: fc.constantFrom("https://evil.example/cb", ""), weight: 1 });
    case "code_verifier":
      return mostly([CODE_VERIFIER], ["short", "!".repeat(43)]);
    case "code_challenge":
      return mostly([CODE_CHALLENGE], ["short", "!".repeat(43)]);
    case "code_challenge_method":
      return mostly(["S256"], ["plain", "bogus"]);
    case "refresh_token":
      return fc.oneof({ arbitrary: ref("refreshToken"), weight: 4 }, { arbitrary: fc.constantFrom("nope"), weight: 1 });
    case "client_id":
      return fc.oneof({ arbitrary: ref("clientId"), weight: 4 }, { arbitrary: fc.constantFrom("nope", ""), weight: 1 });
    case "client_secret":
      return fc.oneof({ arbitrary: ref("clientSecret"), weight: 4 }, { arbitrary: fc.constantFrom("wrong", ""), weight: 1 });
    case "token":
    case "access_token":
      return fc.oneof({ arbitrary: ref("accessToken"), weight: 3 }, { arbitrary: ref("refreshToken"), weight: 1 }, { arbitrary: fc.constantFrom("nope"), weight: 1 });
    case "response":
      // What the pages' script posts: a WebAuthn credential as JSON.
      return mostly(
        ["", "{}", JSON.stringify({ id: "AAAA", rawId: "AAAA", type: "public-key", response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA", attestationObject: "AA" } })],
        ["null", "[]", "{\"id\":", JSON.stringify({ id: "a+/=", rawId: "a+/=", type: "public-key", response: { clientDataJSON: "%%" } })],
      );
    case "confirm":
      // The confirmation pages' hidden field: mostly sent, so that irreversible actions are reached too.
      return mostly(["yes"], ["", "no"]);
    case "token_type_hint":
      return mostly(["access_token", "refresh_token"], ["bogus"]);
    case "response_type":
      return mostly(["code"], ["token", "code id_token", ""]);
    case "state":
      return mostly(["fuzz-state"], ["", "s".repeat(600)]);
    case "scope":
      return mostly(["", "openid", "openid profile email"], ["x".repeat(300), "openid openid"]);
    case "nonce":
      return mostly(["n-0S6_WzA2Mj"], ["", "n".repeat(600)]);
    case "prompt":
      return mostly(["", "none", "login", "consent"], ["none login", "bogus"]);
    case "max_age":
      return mostly(["0", "3600"], ["-1", "1e3", "99999999999"]);
    case "login_hint":
    case "logout_hint":
      return fc.oneof({ arbitrary: ref("victimEmail"), weight: 3 }, { arbitrary: fc.constantFrom("", "x".repeat(300)), weight: 1 });
    case "id_token_hint":
      return fc.oneof({ arbitrary: ref("idToken"), weight: 4 }, { arbitrary: fc.constantFrom("", "a.b.c", "eyJhbGciOiJub25lIn0.e30."), weight: 1 });
    case "post_logout_redirect_uri":
      return mostly(["https://fuzz-logout.example/done"], ["https://evil.example/", "", "not a uri"]);
    case "scope_openid":
    case "scope_profile":
    case "scope_email":
      return mostly(["yes", ""], ["no"]);
    case "id_token_alg":
      return mostly(["ES256", "RS256"], ["none", "HS256", ""]);
    case "post_logout_redirect_uris":
      return mostly(["https://fuzz-logout.example/done", ""], ["not a uri", "http://insecure.example/x"]);
    case "backchannel_logout_uri":
      return mostly(["", "https://fuzz.example/backchannel-logout"], ["not a uri", "javascript:alert(1)"]);
    default:
      return fc.oneof(fc.constantFrom("fuzz", ""), fc.string({ maxLength: 10 }));
  }
}

/** A field's value, plausible, or when spoiling now and then hostile text. */
function valueOf(name: string, route: FuzzRoute, spoil: boolean, defaultPassword: string): fc.Arbitrary<FieldValue> {
  const usual = plausible(name, route, defaultPassword);
  return spoil ? fc.oneof({ arbitrary: usual, weight: 6 }, { arbitrary: HOSTILE_TEXT, weight: 1 }) : usual;
}

/** Query or form pieces for `fields`: plausible ones all present when required; spoiled ones now and then left out, repeated or joined by unknown and raw pieces. */
function piecesFor(fields: readonly string[], required: readonly string[], route: FuzzRoute, spoil: boolean, defaultPassword: string): fc.Arbitrary<QueryPiece[]> {
  const perField = fields.map((name) => {
    const present = fc.tuple(valueOf(name, route, spoil, defaultPassword), fc.nat({ max: 11 })).map(([value, roll]): QueryPiece[] => {
      const piece = { name, value };
      if (spoil && roll === 0) return [piece, piece];
      if (spoil && roll === 1) return [piece, { name, value: "other" }];
      return [piece];
    });
    const absent = fc.constant<QueryPiece[]>([]);
    if (required.includes(name)) return spoil ? fc.oneof({ arbitrary: present, weight: 10 }, { arbitrary: absent, weight: 1 }) : present;
    return fc.oneof({ arbitrary: present, weight: 2 }, { arbitrary: absent, weight: 1 });
  });
  const extra = spoil
    ? fc.array(
        fc.oneof(
          RAW_QUERY_PIECES.map((raw): QueryPiece => ({ raw })),
          fc.tuple(fc.constantFrom("unknown", "is_api_user", "role", "__proto__", "_csrf", "a[b]", ""), HOSTILE_TEXT).map(([name, value]): QueryPiece => ({ name, value })),
        ),
        { maxLength: 2 },
      )
    : fc.constant<QueryPiece[]>([]);
  return fc.tuple(fc.tuple(...perField), extra).map(([pieces, more]) => [...pieces.flat(), ...more]);
}

/** Query and form pieces that no encoder writes: invalid, overlong or truncated escapes, invalid UTF-8, NUL, empty names, stray separators. */
const RAW_QUERY_PIECES = fc.oneof(
  fc.constantFrom("%", "%ZZ", "%0", "%00=1", "email=%C0%80", "name=%ED%A0%80", "q=%FF%FE", "&&", "=x", "email", "name=a%", "%E0%A4%A", "a=%00", "+=+", "a=b=c"),
  fc.integer({ min: 33, max: 60 }).map((count) => Array.from({ length: count }, (_, i) => `p${i}=1`).join("&")),
);

/** Path segments that are not ids: escapes, NUL, invalid UTF-8, sizes, traversal. */
const HOSTILE_SEGMENTS = fc.constantFrom(
  "%00",
  "a%00b",
  "%ZZ",
  "%",
  "%E0%A4%A",
  "%ED%A0%80",
  "%C0%80",
  "%FF",
  "a".repeat(250),
  "..%2F..",
  "%2F",
  "%20",
  "00000000-0000-0000-0000-000000000000",
  "3F1C2B9E-0000-4000-8000-000000000001",
  "-1",
  "99999999999999999999999",
  "1e400",
  "%F0%9F%98%80",
);

const CONTENT_TYPES = fc.constantFrom(
  "application/x-www-form-urlencoded",
  "application/x-www-form-urlencoded; charset=utf-8",
  "application/x-www-form-urlencoded; charset=latin1",
  "application/x-www-form-urlencoded; charset=\u00ff",
  "application/json",
  "application/json; charset=utf-16",
  "text/plain",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencodedx",
  "text/html, application/x-www-form-urlencoded",
  "",
);

/** Bodies that no form is: broken JSON, deep nesting, bytes that are not UTF-8, oversized text. */
const RAW_BODIES: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.constantFrom("", "{", "null", "[]", "0", "1e400", '"text"', '{"a":1,"a":2}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', "%", "&", "="),
  fc.integer({ min: 200, max: 6000 }).map((levels) => `${"[".repeat(levels)}${"]".repeat(levels)}`),
  fc.integer({ min: 200, max: 3000 }).map((levels) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`),
  fc.constantFrom(
    Buffer.from([0x65, 0x6d, 0x61, 0x69, 0x6c, 0x3d, 0xff, 0xfe]),
    Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x3d, 0x31]),
    Buffer.from([0x61, 0x3d, 0xc0, 0x80]),
    Buffer.from([0x61, 0x3d, 0xed, 0xa0, 0x80]),
    Buffer.from("email=ada\u0000@example.org"),
  ),
  fc.constant("x".repeat(17 * 1024)),
  fc.constant(`a=${"%41".repeat(6000)}`),
);

/** A JSON value of the wrong type for a form field. */
const WRONG_JSON: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 2 }), HOSTILE_TEXT, fc.constantFrom(1e308, -1, 2 ** 53 + 2, true, null));

const ANY_CALLER = fc.constantFrom<FuzzCaller>("admin", "normal", "visitor", "none", "stale-session", "junk-cookie");
const ANY_AUTHORIZATION = fc.constantFrom<FuzzAuthorization>("none", "basic-client", "basic-junk", "bearer", "bearer-junk", "bearer-malformed");

/** The caller a plausible request to `route` comes from. */
function plausibleCaller(route: FuzzRoute): fc.Arbitrary<FuzzCaller> {
  if (/^\/(sign-in|password-reset|invitations|unlock)/.test(route.url)) return fc.constantFrom<FuzzCaller>("visitor", "visitor", "admin");
  if (/^\/(token|oauth\/(token|access_token|revoke|introspect)|user\.json|userinfo|\.well-known|healthcheck|metrics)/.test(route.url)) return fc.constant<FuzzCaller>("none");
  // The people RP-initiated logout is for: signed in, or not.
  if (route.url.startsWith("/end-session")) return fc.constantFrom<FuzzCaller>("normal", "visitor", "admin");
  if (route.url.startsWith("/account")) return fc.constantFrom<FuzzCaller>("admin", "normal");
  return fc.constantFrom<FuzzCaller>("admin", "admin", "admin", "normal");
}

function plausibleAuthorization(route: FuzzRoute): fc.Arbitrary<FuzzAuthorization> {
  // Client credentials go in the body of a plausible request to the OAuth endpoints (Basic as well is refused).
  return route.url === "/user.json" || route.url === "/userinfo" ? fc.constantFrom<FuzzAuthorization>("bearer", "bearer", "none") : fc.constant<FuzzAuthorization>("none");
}

/** The token endpoints' plausible bodies: a code exchange or a refresh, each whole (a code exchange with another grant's fields is no plausible request). */
const TOKEN_ENDPOINTS = new Set(["/token", "/oauth/token", "/oauth/access_token"]);

function tokenRequestPieces(route: FuzzRoute, defaultPassword: string): fc.Arbitrary<QueryPiece[]> {
  const field = (name: string) => plausible(name, route, defaultPassword).map((value): QueryPiece => ({ name, value }));
  const client = [field("client_id"), field("client_secret")] as const;
  return fc.oneof(
    fc.tuple(fc.constant<QueryPiece>({ name: "grant_type", value: "authorization_code" }), field("code"), field("redirect_uri"), field("code_verifier"), ...client),
    fc.tuple(fc.constant<QueryPiece>({ name: "grant_type", value: "refresh_token" }), field("refresh_token"), ...client),
  );
}

/**
 * Requests for one route: three in five plausible (the caller it is for,
 * known ids, well-formed values drawn from the scenario), two in five
 * spoiled anywhere: caller, path, query, body and content type.
 */
export function requestsFor(route: FuzzRoute, defaultPassword: string): fc.Arbitrary<FuzzRequest> {
  const segments = route.url.split("/").slice(1);
  const build = (spoil: boolean): fc.Arbitrary<FuzzRequest> => {
    const path = fc.tuple(
      ...segments.map((segment): fc.Arbitrary<UrlPart> => {
        if (!segment.startsWith(":")) return fc.constant({ raw: segment });
        const name = PATH_REFS[`${segments[0] ?? ""}:${segment.slice(1)}`] as RefName;
        const known = ref(name).map((value): UrlPart => ({ value }));
        if (!spoil) return known;
        return fc.oneof(
          { arbitrary: known, weight: 4 },
          { arbitrary: HOSTILE_SEGMENTS.map((raw): UrlPart => ({ raw })), weight: 1 },
          { arbitrary: HOSTILE_TEXT.map((value): UrlPart => ({ value })), weight: 1 },
        );
      }),
    );
    const query = piecesFor(route.query, route.required, route, spoil, defaultPassword);
    const fields =
      route.body === null ? null : TOKEN_ENDPOINTS.has(route.url) && !spoil ? tokenRequestPieces(route, defaultPassword) : piecesFor(route.body, route.required, route, spoil, defaultPassword);
    const form = fields?.map((pieces): FuzzBody => ({ kind: "form", contentType: "application/x-www-form-urlencoded", fields: pieces }));
    const body: fc.Arbitrary<FuzzBody> =
      form === undefined
        ? spoil
          ? fc.oneof({ arbitrary: fc.constant<FuzzBody>({ kind: "none" }), weight: 3 }, { arbitrary: fc.tuple(CONTENT_TYPES, RAW_BODIES).map(([contentType, payload]): FuzzBody => ({ kind: "raw", contentType, payload })), weight: 1 })
          : fc.constant<FuzzBody>({ kind: "none" })
        : spoil
          ? fc.oneof(
              { arbitrary: form, weight: 6 },
              {
                arbitrary: fc.tuple(CONTENT_TYPES, fields!).map(([contentType, pieces]): FuzzBody => ({ kind: "form", contentType: contentType === "" ? null : contentType, fields: pieces })),
                weight: 1,
              },
              { arbitrary: fc.tuple(CONTENT_TYPES, RAW_BODIES).map(([contentType, payload]): FuzzBody => ({ kind: "raw", contentType, payload })), weight: 1 },
              {
                arbitrary: fc.tuple(fields!, fc.dictionary(fc.constantFrom(...(route.body!.length > 0 ? route.body! : ["_csrf"])), WRONG_JSON, { maxKeys: 3 })).map(
                  ([pieces, wrong]): FuzzBody => ({ kind: "json", contentType: "application/json", value: { fields: pieces, wrong } }),
                ),
                weight: 1,
              },
            )
          : form;
    // A spoiled request mostly keeps the caller it is for (session, CSRF token, credentials), so the spoiled parts get past the guards.
    const caller = spoil ? fc.oneof({ arbitrary: plausibleCaller(route), weight: 2 }, { arbitrary: ANY_CALLER, weight: 1 }) : plausibleCaller(route);
    const authorization = spoil ? fc.oneof({ arbitrary: plausibleAuthorization(route), weight: 2 }, { arbitrary: ANY_AUTHORIZATION, weight: 1 }) : plausibleAuthorization(route);
    const method = route.method === "GET" && spoil ? fc.constantFrom<"GET" | "HEAD">("GET", "GET", "GET", "HEAD") : fc.constant(route.method);
    return fc.tuple(method, path, query, body, caller, authorization).map(([verb, parts, pieces, payload, who, auth]) => ({
      route: route.name,
      method: verb,
      path: parts,
      query: pieces,
      caller: who,
      authorization: auth,
      body: payload,
    }));
  };
  return fc.oneof({ arbitrary: build(false), weight: 3 }, { arbitrary: build(true), weight: 2 });
}

/** Percent-encodes text as a browser would, and an unpaired surrogate as the (invalid) UTF-8 of its code unit. */
export function percentEncode(text: string): string {
  let out = "";
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    } else out += encodeURIComponent(character);
  }
  return out;
}
