import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { endpoint } from "../src/index.js";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

const DEFAULT_HEADERS = {
  accept: "application/vnd.tessera.v3+json",
  "user-agent": `tessera-endpoint.js/${version}`,
};
const JSON_BODY_HEADERS = { ...DEFAULT_HEADERS, "content-type": "application/json; charset=utf-8" };

describe("endpoint.DEFAULTS", () => {
  it("holds the method, base URL, headers and media type of decision E2", () => {
    expect(endpoint.DEFAULTS).toEqual({
      method: "GET",
      baseUrl: "http://localhost:3000",
      headers: DEFAULT_HEADERS,
      mediaType: { format: "" },
    });
  });
});

describe("endpoint(route, options)", () => {
  it("fills path parameters and sends the rest of a GET as the query string", () => {
    expect(endpoint("GET /orgs/{org}/users/{uid}/permissions", { org: "gds", uid: "u-1", page: 2, per_page: 50 })).toEqual({
      method: "GET",
      url: "http://localhost:3000/orgs/gds/users/u-1/permissions?page=2&per_page=50",
      headers: DEFAULT_HEADERS,
    });
  });

  it("defaults the method to GET when the route is only a URL", () => {
    expect(endpoint("/user.json")).toEqual({ method: "GET", url: "http://localhost:3000/user.json", headers: DEFAULT_HEADERS });
  });

  it("accepts a single options object carrying method and url", () => {
    expect(endpoint({ method: "DELETE", url: "/sessions/{id}", id: "s1" })).toEqual({
      method: "DELETE",
      url: "http://localhost:3000/sessions/s1",
      headers: DEFAULT_HEADERS,
    });
  });

  it("lets options override the route's method and URL", () => {
    expect(endpoint("GET /ignored", { method: "POST", url: "/sessions", username: "ada" })).toEqual({
      method: "POST",
      url: "http://localhost:3000/sessions",
      headers: JSON_BODY_HEADERS,
      body: { username: "ada" },
    });
  });

  it("fills :name placeholders in the path", () => {
    expect(endpoint("GET /users/:uid/reauth/:reason", { uid: "u 1", reason: "suspended" }).url).toBe(
      "http://localhost:3000/users/u%201/reauth/suspended",
    );
  });

  it("leaves a :word inside the query string as text", () => {
    expect(endpoint("GET /search?q=status:open&sort=:name", { name: "ignored" }).url).toBe(
      "http://localhost:3000/search?q=status:open&sort=:name&name=ignored",
    );
  });

  it("sends the parameters a POST does not use in the URL as a JSON body", () => {
    expect(endpoint("POST /users/{uid}/reauth", { uid: "u-1", reason: "suspended", tags: ["a"] })).toEqual({
      method: "POST",
      url: "http://localhost:3000/users/u-1/reauth",
      headers: JSON_BODY_HEADERS,
      body: { reason: "suspended", tags: ["a"] },
    });
  });

  it("uses data as the raw body, with the caller's content type", () => {
    expect(
      endpoint("POST /markdown/raw", {
        data: "Hello world github/linguist#1 **cool**",
        headers: { "Content-Type": "text/plain; charset=utf-8", Accept: "text/html" },
      }),
    ).toEqual({
      method: "POST",
      url: "http://localhost:3000/markdown/raw",
      headers: { accept: "text/html", "user-agent": DEFAULT_HEADERS["user-agent"], "content-type": "text/plain; charset=utf-8" },
      body: "Hello world github/linguist#1 **cool**",
    });
  });

  it("sends {?name,label} parameters to the query string and data as the body, on another host", () => {
    expect(
      endpoint("POST https://uploads.example.org/releases/{id}/assets{?name,label}", {
        id: 7,
        name: "notes.txt",
        label: "Release notes",
        data: "the notes",
        headers: { "content-type": "text/plain" },
      }),
    ).toEqual({
      method: "POST",
      url: "https://uploads.example.org/releases/7/assets?name=notes.txt&label=Release%20notes",
      headers: { ...DEFAULT_HEADERS, "content-type": "text/plain" },
      body: "the notes",
    });
  });

  it("returns the request option unchanged", () => {
    const request = { timeout: 5000, signal: "anything" };
    expect(endpoint("GET /user.json", { request }).request).toBe(request);
  });

  it("lowercases header names and passes authorization through", () => {
    expect(endpoint("GET /user.json", { headers: { Authorization: "token abc", "X-Trace-ID": "t1" } }).headers).toEqual({
      ...DEFAULT_HEADERS,
      authorization: "token abc",
      "x-trace-id": "t1",
    });
  });

  it("gives PUT and PATCH an empty body when there is nothing to send", () => {
    expect(endpoint("PUT /users/{uid}/star", { uid: "u-1" })).toEqual({
      method: "PUT",
      url: "http://localhost:3000/users/u-1/star",
      headers: DEFAULT_HEADERS,
      body: "",
    });
  });

  it("sends a full URL as it is, without the base URL", () => {
    expect(endpoint("GET https://signon.example.org/user.json", { client_id: "abc" }).url).toBe(
      "https://signon.example.org/user.json?client_id=abc",
    );
  });

  it("takes the host from a reserved expansion such as {+origin}", () => {
    expect(endpoint("GET {+origin}/user.json", { origin: "https://signon.example.org" }).url).toBe("https://signon.example.org/user.json");
  });

  it("drops undefined values from the URL, query, body and headers", () => {
    expect(endpoint("PATCH /users/{uid}{?fields}", { uid: "u-1", fields: undefined, name: undefined, email: "a@b.c", headers: { "x-skip": undefined } })).toEqual({
      method: "PATCH",
      url: "http://localhost:3000/users/u-1",
      headers: JSON_BODY_HEADERS,
      body: { email: "a@b.c" },
    });
  });

  it("drops a trailing slash from the path", () => {
    expect(endpoint("GET /users/").url).toBe("http://localhost:3000/users");
  });

  it("fills :name placeholders after expressions and stray braces, but not in the authority or fragment", () => {
    expect(endpoint("GET https://user:pass@host.example/{a}/x}/:bc#:de", { a: 1, bc: 2 }).url).toBe(
      "https://user:pass@host.example/1/x}/2#:de",
    );
  });

  it("keeps + between terms of a search query q and encodes the rest", () => {
    expect(endpoint("GET /search/users", { q: "status:active+org:gds team lead" }).url).toBe(
      "http://localhost:3000/search/users?q=status%3Aactive+org%3Agds%20team%20lead",
    );
  });
});

describe("endpoint(…) mediaType", () => {
  it("sets the format of the vendor media type in accept", () => {
    expect(endpoint("GET /courses/{key}", { key: "c1", mediaType: { format: "raw" } }).headers.accept).toBe("application/vnd.tessera.v3.raw");
  });

  it("sets the format of each vendor media type of a list", () => {
    expect(
      endpoint("GET /x", { headers: { accept: "application/vnd.tessera.v3+json,application/vnd.tessera.diff,text/html" }, mediaType: { format: "patch" } }).headers
        .accept,
    ).toBe("application/vnd.tessera.v3.patch,application/vnd.tessera.patch,text/html");
  });

  it("turns previews into preview media types for GraphQL, with the header's vendor", () => {
    expect(endpoint("POST /graphql", { query: "{ viewer }", mediaType: { previews: ["jean-grey", "symmetra-preview"] } }).headers.accept).toBe(
      "application/vnd.tessera.jean-grey-preview+json,application/vnd.tessera.symmetra-preview+json",
    );
  });

  it("ignores previews outside GraphQL", () => {
    expect(endpoint("GET /x", { mediaType: { previews: ["jean-grey"] } }).headers.accept).toBe(DEFAULT_HEADERS.accept);
  });

  it("writes a format with $ signs as it is", () => {
    expect(endpoint("GET /x", { mediaType: { format: "$1$&" } }).headers.accept).toBe("application/vnd.tessera.v3.$1$&");
  });

  it("leaves a binary accept header alone", () => {
    expect(endpoint("GET /x", { headers: { accept: "application/octet-stream" }, mediaType: { format: "raw" } }).headers.accept).toBe(
      "application/octet-stream",
    );
  });
});

describe("endpoint.merge(route, options)", () => {
  it("applies the defaults without parsing anything", () => {
    expect(endpoint.merge("POST /users/{uid}/reauth", { uid: "u-1", headers: { "X-Trace": "t" } })).toEqual({
      method: "POST",
      baseUrl: "http://localhost:3000",
      url: "/users/{uid}/reauth",
      headers: { ...DEFAULT_HEADERS, "x-trace": "t" },
      mediaType: { format: "" },
      uid: "u-1",
    });
  });
});

describe("endpoint.parse(merged)", () => {
  it.each([
    ["GET /users/{uid}", { uid: "u-1", page: 2 }],
    ["POST /users/:uid/reauth", { uid: "u-1", reason: "r" }],
    ["PUT /x{?a,b}", { a: 1, data: "raw", headers: { "Content-Type": "text/plain" } }],
  ] as const)("gives what endpoint() gives for %s", (route, options) => {
    expect(endpoint.parse(endpoint.merge(route, options))).toEqual(endpoint(route, options));
  });
});

describe("endpoint.defaults(options)", () => {
  it("derives an endpoint whose defaults cascade: later values win and headers merge", () => {
    const signon = endpoint.defaults({ baseUrl: "https://signon.example.org", headers: { authorization: "Bearer one", "X-App": "a" } });
    const admin = signon.defaults({ headers: { Authorization: "Bearer two" }, per_page: 100 });
    expect(admin.DEFAULTS).toEqual({
      method: "GET",
      baseUrl: "https://signon.example.org",
      headers: { ...DEFAULT_HEADERS, authorization: "Bearer two", "x-app": "a" },
      mediaType: { format: "" },
      per_page: 100,
    });
    expect(admin("GET /users")).toEqual({
      method: "GET",
      url: "https://signon.example.org/users?per_page=100",
      headers: { ...DEFAULT_HEADERS, authorization: "Bearer two", "x-app": "a" },
    });
  });

  it("never changes the endpoint it derives from", () => {
    const before = structuredClone(endpoint.DEFAULTS);
    const derived = endpoint.defaults({ baseUrl: "https://other.example.org", headers: { accept: "text/plain" }, mediaType: { previews: ["a"] } });
    derived("POST /graphql", { mediaType: { previews: ["b"] } });
    derived.merge("/graphql");
    expect(endpoint.DEFAULTS).toEqual(before);
    expect(derived.DEFAULTS.mediaType).toEqual({ format: "", previews: ["a"] });
  });

  it("combines default and call previews for GraphQL", () => {
    const previewing = endpoint.defaults({ mediaType: { previews: ["jean-grey"] } });
    expect(previewing("POST /graphql", { mediaType: { previews: ["symmetra"] } }).headers.accept).toBe(
      "application/vnd.tessera.jean-grey-preview+json,application/vnd.tessera.symmetra-preview+json",
    );
  });
});
