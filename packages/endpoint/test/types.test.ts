import { describe, expectTypeOf, it } from "vitest";
import { endpoint, type Endpoint, type MergedOptions, type RequestOptions } from "../src/index.js";

// These assertions are checked by `tsc` (npm run typecheck); at run time they only call through.
describe("types", () => {
  it("types both call forms and the helpers", () => {
    expectTypeOf(endpoint("GET /users/{uid}", { uid: "u-1" })).toEqualTypeOf<RequestOptions>();
    expectTypeOf(endpoint({ method: "POST", url: "/token", grant_type: "refresh_token" })).toEqualTypeOf<RequestOptions>();
    expectTypeOf(endpoint.defaults({ baseUrl: "https://signon.example.org" })).toEqualTypeOf<Endpoint>();
    expectTypeOf(endpoint.merge("GET /users")).toEqualTypeOf<MergedOptions>();
    expectTypeOf(endpoint.parse(endpoint.merge("GET /users"))).toEqualTypeOf<RequestOptions>();
    expectTypeOf(endpoint.DEFAULTS.headers["user-agent"]).toEqualTypeOf<string>();
  });

  it("accepts undefined option values, which are left out", () => {
    expectTypeOf(endpoint).toBeCallableWith("GET /users", { page: undefined, headers: { "x-skip": undefined }, mediaType: { format: undefined } });
  });
});
