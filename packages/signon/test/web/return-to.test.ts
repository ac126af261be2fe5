import { describe, expect, it } from "vitest";
import { safeReturnPath } from "../../src/routes/sign-in.js";
import { InjectBrowser, parseSignInForm } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

const elsewhere = ["https://evil.example/", "//evil.example/", "/\\evil.example/", "\\\\evil.example", "javascript:alert(1)", "/\t/evil.example", "/ /evil.example", "/a\r\nSet-Cookie: x=1"];

describe("safeReturnPath", () => {
  it("keeps paths on this service and sends everything else to /", () => {
    expect(safeReturnPath("/users?role=admin&page=2")).toBe("/users?role=admin&page=2");
    expect(safeReturnPath("/oauth/authorize?state=%E2%82%AC")).toBe("/oauth/authorize?state=%E2%82%AC");
    for (const value of [...elsewhere, undefined, "", "users"]) expect(safeReturnPath(value), JSON.stringify(value)).toBe("/");
  });

  it("percent-encodes characters beyond ASCII, which a Location header cannot carry", () => {
    expect(safeReturnPath("/caf\u00e9/\u20ac")).toBe("/caf%C3%A9/%E2%82%AC");
    expect(safeReturnPath("/\ud800")).toBe("/");
  });
});

describe("return_to on the sign-in pages", () => {
  it("GET /sign-in of a signed-in browser redirects to a path beyond ASCII, encoded, not a 500", async () => {
    const { browser } = await signedInAs(app, ctx, "normal");
    const response = await browser.get(`/sign-in?return_to=${encodeURIComponent("/account?x=\u20ac")}`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/account?x=%E2%82%AC");
  });

  it("POST /sign-in goes on to an encoded path beyond ASCII and never to another site", async () => {
    const user = await createUser(ctx);
    for (const [returnTo, expected] of [["/account?x=\u20ac", "/account?x=%E2%82%AC"], ...elsewhere.map((value) => [value, "/"])] as const) {
      const browser = new InjectBrowser(app);
      const form = parseSignInForm((await browser.get("/sign-in")).body);
      const response = await browser.postForm("/sign-in", { _csrf: form.csrfToken, email: user.email, password: defaultPassword, return_to: returnTo });
      expect(response.statusCode, JSON.stringify(returnTo)).toBe(303);
      expect(response.headers.location, JSON.stringify(returnTo)).toBe(expected);
    }
  });

  it("GET /sign-in/two-step of a fully signed-in browser never leaves the service", async () => {
    const { browser } = await signedInAs(app, ctx, "normal");
    for (const returnTo of elsewhere) {
      const response = await browser.get(`/sign-in/two-step?return_to=${encodeURIComponent(returnTo)}`);
      expect(response.statusCode, returnTo).toBe(303);
      expect(response.headers.location, returnTo).toBe("/");
    }
    const encoded = await browser.get(`/sign-in/two-step?return_to=${encodeURIComponent("/\u00e9")}`);
    expect(encoded.headers.location).toBe("/%C3%A9");
  });
});
