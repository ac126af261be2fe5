import { endpoint as octokitEndpoint } from "@octokit/endpoint";
import { describe, expect, it } from "vitest";
import { endpoint, type EndpointOptions } from "../src/index.js";

/** `@octokit/endpoint` 11.0.5 given our defaults, so both libraries start from the same place. */
const theirs = octokitEndpoint.defaults(endpoint.DEFAULTS as Parameters<typeof octokitEndpoint.defaults>[0]);

/** Either library, called the loose way the tables below call it. */
type AnyEndpoint = (route: string | EndpointOptions, options?: EndpointOptions) => unknown;

type Call = [route: string, options?: EndpointOptions];

const CALLS: Record<string, Call> = {
  "GET with path parameters and a query": ["GET /orgs/{org}/users/{uid}", { org: "gds", uid: "u-1", page: 2, per_page: 100 }],
  ":name placeholders": ["GET /repos/:owner/:repo/issues/:issue_number", { owner: "o", repo: "r", issue_number: 5, state: "open" }],
  "a route that is only a URL": ["/user.json"],
  "a lowercase method": ["post /sessions", { username: "ada" }],
  "a full URL with a query": ["GET https://signon.example.org/user.json", { client_id: "abc", access_token: "t" }],
  "a URL that already has a query": ["GET /users?sort=name", { page: 3 }],
  "a POST with a nested JSON body": ["POST /users/{uid}/permissions", { uid: "u-1", permissions: { editorial: ["signin", "admin"] }, notify: true }],
  "a PATCH with a body": ["PATCH /users/{uid}", { uid: "u-1", name: "Ada", email: "ada@example.org" }],
  "a PUT without a body": ["PUT /users/{uid}/star", { uid: "u-1" }],
  "a DELETE without a body": ["DELETE /sessions/{id}", { id: "s1" }],
  "a DELETE with a body": ["DELETE /users/{uid}/permissions", { uid: "u-1", names: ["admin"] }],
  "a HEAD with a query": ["HEAD /courses/{key}", { key: "course-v1:edX+DemoX+Demo", fresh: false }],
  "a raw body from data": [
    "POST /markdown/raw",
    { data: "Hello **world**", headers: { "Content-Type": "text/plain; charset=utf-8", Accept: "text/html" } },
  ],
  "{?name,label} with data on another host": [
    "POST https://uploads.example.org/releases/{id}/assets{?name,label}",
    { id: 7, name: "notes.txt", label: "Release notes", data: "the notes", headers: { "content-type": "text/plain" } },
  ],
  "a search query with spaces, colons and +": ["GET /search/issues", { q: "is:open label:bug+repo:a/b author:ada lovelace", sort: "created" }],
  "mixed-case headers and authorization": ["GET /user.json", { headers: { Authorization: "token abc", "X-Request-ID": "r1" } }],
  "undefined values": ["GET /users/{uid}", { uid: "u-1", page: undefined, headers: { "x-skip": undefined } }],
  "the request option": ["GET /user.json", { request: { timeout: 1000, retries: 2 } }],
  "format raw": ["GET /courses/{key}/outline", { key: "c1", mediaType: { format: "raw" } }],
  "format on a list of media types": [
    "GET /x",
    { headers: { accept: "application/vnd.tessera.v3+json,application/vnd.tessera.diff,text/html" }, mediaType: { format: "patch" } },
  ],
  "format text+json": ["GET /x", { mediaType: { format: "text+json" } }],
  "a binary request": ["GET /files/{id}", { id: "f", headers: { accept: "application/octet-stream" }, mediaType: { format: "raw" } }],
  "GraphQL previews with a vendor accept header": [
    "POST /graphql",
    { headers: { accept: "application/vnd.github.v3+json" }, query: "{ viewer { login } }", mediaType: { previews: ["jean-grey", "symmetra"] } },
  ],
  "a trailing slash": ["GET /users/"],
  "the root path": ["GET /"],
  "reserved expansion": ["GET /files/{+path}", { path: "docs/a b/readme.md" }],
  "numbers, booleans and arrays in the query": ["GET /completions", { user_ids: [1, 2], page_size: 10, active: true }],
  "an options object instead of a route": ["", { method: "POST", url: "/token", grant_type: "refresh_token", refresh_token: "r" }],
};

function call(library: typeof endpoint | typeof theirs | typeof octokitEndpoint, [route, options]: Call): unknown {
  const loose = library as AnyEndpoint;
  return route === "" ? loose(options ?? {}) : loose(route, options);
}

describe("compatibility with @octokit/endpoint 11.0.5", () => {
  it("has the same defaults", () => {
    expect(endpoint.DEFAULTS).toEqual(theirs.DEFAULTS);
  });

  it.each(Object.entries(CALLS))("gives the same result for %s", (_name, args) => {
    expect(call(endpoint, args)).toEqual(call(theirs, args));
  });

  it.each(Object.entries(CALLS))("merges %s the same way", (_name, [route, options]) => {
    const ours = route === "" ? endpoint.merge(options ?? {}) : endpoint.merge(route, options);
    const octokit = route === "" ? theirs.merge(options as never) : theirs.merge(route, options as never);
    expect(ours).toEqual(octokit);
  });

  it("gives the same result through .defaults() twice", () => {
    const settings = { baseUrl: "https://signon.example.org", headers: { Authorization: "Bearer t" }, per_page: 50 };
    const more = { headers: { "X-App": "editorial" }, mediaType: { format: "diff" } };
    const ours = endpoint.defaults(settings).defaults(more);
    const octokit = theirs.defaults(settings).defaults(more);
    expect(ours.DEFAULTS).toEqual(octokit.DEFAULTS);
    expect(ours("GET /users/{uid}", { uid: "u-1" })).toEqual(octokit("GET /users/{uid}", { uid: "u-1" }));
  });

  it("merges plain-object options with defaults of the same name the same way", () => {
    const settings = { request: { timeout: 1000 }, filter: { state: "open" }, mediaType: { previews: ["a"] } };
    const call: EndpointOptions = { request: { retries: 2 }, filter: { label: "bug" }, mediaType: { format: "raw" } };
    expect(endpoint.defaults(settings)("POST /issues", call)).toEqual(theirs.defaults(settings)("POST /issues", call as never));
  });
});

/** Calls made with GitHub's defaults (`@octokit/endpoint`'s own), as code written for GitHub makes them. */
const GITHUB_CALLS: Record<string, Call> = {
  "GraphQL previews": ["POST /graphql", { query: "{ viewer { login } }", mediaType: { previews: ["jean-grey", "symmetra"] } }],
  "GraphQL previews with a format": ["POST /graphql", { mediaType: { format: "raw", previews: ["symmetra"] } }],
  "GraphQL previews with a format and previews in the accept header": [
    "POST /graphql",
    { headers: { accept: "application/vnd.foo-preview,application/vnd.bar-preview" }, mediaType: { format: "raw", previews: ["symmetra"] } },
  ],
  "GraphQL previews with previews of a vendor in the accept header": [
    "POST /graphql",
    { headers: { accept: "application/vnd.github.foo-preview+json" }, mediaType: { previews: ["symmetra"] } },
  ],
  "GraphQL previews with a binary accept header": ["POST /graphql", { headers: { accept: "application/octet-stream" }, mediaType: { previews: ["symmetra"] } }],
  "previews outside GraphQL with a format and an accept header": [
    "GET /repos/{owner}/{repo}/issues/{number}",
    {
      owner: "octokit",
      repo: "endpoint.js",
      number: 123,
      headers: { accept: "application/vnd.foo-preview,application/vnd.bar-preview" },
      mediaType: { format: "raw", previews: ["symmetra"] },
    },
  ],
};

describe("compatibility with @octokit/endpoint 11.0.5 on GitHub's defaults", () => {
  const github = endpoint.defaults(octokitEndpoint.DEFAULTS as EndpointOptions);

  it.each(Object.entries(GITHUB_CALLS))("gives the same result for %s", (_name, args) => {
    expect(call(github, args)).toEqual(call(octokitEndpoint, args));
  });

  it("names previews in an accept header without a vendor after the vendor of the defaults", () => {
    const args: Call = [
      "POST /graphql",
      { headers: { accept: "application/vnd.foo-preview,application/vnd.bar-preview" }, mediaType: { format: "raw", previews: ["symmetra"] } },
    ];
    const accept = "application/vnd.github.foo-preview.raw,application/vnd.github.bar-preview.raw,application/vnd.github.symmetra-preview.raw";
    expect(call(github, args)).toMatchObject({ headers: { accept } });
    expect(call(octokitEndpoint, args)).toMatchObject({ headers: { accept } });
    expect(call(github.defaults({ headers: { "x-app": "a" } }), args)).toMatchObject({ headers: { accept } });
  });

  it("parses merged options the same way through endpoint.parse", () => {
    const [route, options] = GITHUB_CALLS["GraphQL previews with a format and previews in the accept header"]!;
    expect(github.parse(github.merge(route, options))).toEqual(octokitEndpoint.parse(octokitEndpoint.merge(route, options as never)));
  });
});

/** Where @octokit/endpoint is wrong, we are right; each case is listed in the README. */
describe("deliberate differences from @octokit/endpoint", () => {
  it("keeps a :word inside the query string as text", () => {
    const args: Call = ["GET /search?q=is:open"];
    expect(call(endpoint, args)).toMatchObject({ url: "http://localhost:3000/search?q=is:open" });
    expect(call(theirs, args)).toMatchObject({ url: "http://localhost:3000/search?q=is" });
  });

  it("writes no separator for an undefined query variable", () => {
    const args: Call = ["POST /releases/{id}/assets{?name,label}", { id: 7, name: "notes.txt", data: "x" }];
    expect(call(endpoint, args)).toMatchObject({ url: "http://localhost:3000/releases/7/assets?name=notes.txt" });
    expect(call(theirs, args)).toMatchObject({ url: "http://localhost:3000/releases/7/assets?name=notes.txt&" });
  });

  it("expands an exploded list in the query once, as RFC 6570 says", () => {
    const args: Call = ["GET /completions{?user_ids*,page}", { user_ids: [1, 2], page: 3 }];
    expect(call(endpoint, args)).toMatchObject({ url: "http://localhost:3000/completions?user_ids=1&user_ids=2&page=3" });
    expect(call(theirs, args)).toMatchObject({ url: "http://localhost:3000/completions?user_ids=1,user_ids=2&page=3&user_ids=1%2C2" });
  });

  it("does not repeat a variable with a prefix modifier in the query", () => {
    const args: Call = ["GET /courses/{key:6}/search{?q:3}", { key: "course-v1:x", q: "abcdef" }];
    expect(call(endpoint, args)).toMatchObject({ url: "http://localhost:3000/courses/course/search?q=abc" });
    expect(call(theirs, args)).toMatchObject({ url: "http://localhost:3000/courses/course/search?q=abc&key=course-v1%3Ax&q=abcdef" });
  });

  it("treats an empty list as undefined", () => {
    const args: Call = ["GET /completions{?user_ids}", { user_ids: [] }];
    expect(call(endpoint, args)).toMatchObject({ url: "http://localhost:3000/completions" });
    expect(call(theirs, args)).toMatchObject({ url: "http://localhost:3000/completions?user_ids=" });
  });

  it("names GraphQL previews after the vendor of the accept header", () => {
    const args: Call = ["POST /graphql", { query: "{ viewer }", mediaType: { previews: ["jean-grey"] } }];
    expect(call(endpoint, args)).toMatchObject({ headers: { accept: "application/vnd.tessera.jean-grey-preview+json" } });
    expect(call(theirs, args)).toMatchObject({ headers: { accept: "application/vnd.github.jean-grey-preview+json" } });
  });

  it("names previews in an accept header without a vendor after the vendor of its own defaults", () => {
    const args: Call = ["POST /graphql", { headers: { accept: "application/vnd.foo-preview" }, mediaType: { format: "raw", previews: ["symmetra"] } }];
    expect(call(endpoint, args)).toMatchObject({ headers: { accept: "application/vnd.tessera.foo-preview.raw,application/vnd.tessera.symmetra-preview.raw" } });
    expect(call(theirs, args)).toMatchObject({ headers: { accept: "application/vnd.github.foo-preview.raw,application/vnd.github.symmetra-preview.raw" } });
  });

  it("leaves the defaults alone on GraphQL calls", () => {
    const ours = endpoint.defaults({ mediaType: { previews: ["jean-grey-preview"] } });
    const octokit = theirs.defaults({ mediaType: { previews: ["jean-grey-preview"] } });
    ours("POST /graphql");
    octokit("POST /graphql");
    expect(ours.DEFAULTS.mediaType.previews).toEqual(["jean-grey-preview"]);
    expect(octokit.DEFAULTS.mediaType.previews).toEqual(["jean-grey"]);
  });

  it("accepts a search query q that is not a string", () => {
    expect(endpoint("GET /search", { q: 42 }).url).toBe("http://localhost:3000/search?q=42");
    expect(() => theirs("GET /search", { q: 42 })).toThrow(TypeError);
  });

  it("keeps a :word in the authority of a full URL as text", () => {
    const args: Call = ["GET https://user:pass@host.example/x"];
    expect(call(endpoint, args)).toMatchObject({ url: "https://user:pass@host.example/x" });
    expect(call(theirs, args)).toMatchObject({ url: "https://user@host.example/x" });
  });

  it("expands numbers in a reserved expansion", () => {
    expect(endpoint("GET /ids/{+ids}", { ids: [1, 2] }).url).toBe("http://localhost:3000/ids/1,2");
    expect(() => theirs("GET /ids/{+ids}", { ids: [1, 2] })).toThrow(TypeError);
  });

  it("never splits a surrogate pair with a prefix", () => {
    expect(endpoint("GET /v/{v:1}", { v: "😀x" }).url).toBe("http://localhost:3000/v/%F0%9F%98%80");
    expect(() => theirs("GET /v/{v:1}", { v: "😀x" })).toThrow(URIError);
  });

  it("encodes a % that does not start a percent-encoded triplet", () => {
    const args: Call = ["GET /a/%4z/{+v}", { v: "b%4z" }];
    expect(call(endpoint, args)).toMatchObject({ url: "http://localhost:3000/a/%254z/b%254z" });
    expect(call(theirs, args)).toMatchObject({ url: "http://localhost:3000/a/%4z/b%4z" });
  });
});
