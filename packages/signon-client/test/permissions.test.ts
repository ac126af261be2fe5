import { describe, expect, it } from "vitest";
import { hasAllPermissions, hasAnyPermission, hasPermission } from "../src/permissions.js";

const editor = { permissions: ["signin", "editor"] };

describe("permission helpers", () => {
  it("hasPermission: true only for a permission the user holds", () => {
    expect(hasPermission(editor, "editor")).toBe(true);
    expect(hasPermission(editor, "admin")).toBe(false);
    expect(hasPermission(null, "signin")).toBe(false);
  });

  it("hasAnyPermission: true when at least one is held, false for none or an empty list", () => {
    expect(hasAnyPermission(editor, ["admin", "editor"])).toBe(true);
    expect(hasAnyPermission(editor, ["admin", "gds_editor"])).toBe(false);
    expect(hasAnyPermission(editor, [])).toBe(false);
    expect(hasAnyPermission(undefined, ["signin"])).toBe(false);
  });

  it("hasAllPermissions: true when every one is held; an empty list needs only a user", () => {
    expect(hasAllPermissions(editor, ["signin", "editor"])).toBe(true);
    expect(hasAllPermissions(editor, ["signin", "admin"])).toBe(false);
    expect(hasAllPermissions(editor, [])).toBe(true);
    expect(hasAllPermissions(null, [])).toBe(false);
  });
});

describe("permission guards", async () => {
  const { Browser } = await import("./support/browser.js");
  const { createUser, useHarness } = await import("./support/client-app.js");
  const h = useHarness();

  async function signedIn(permissions: string[]) {
    const user = h.signon.addUser(createUser({ permissions }));
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    return browser;
  }

  it("requirePermission answers 403 without the permission and the page with it", async () => {
    expect((await (await signedIn([])).get("/admin")).statusCode).toBe(403);
    expect((await (await signedIn(["admin"])).get("/admin")).statusCode).toBe(200);
  });

  it("requireAnyPermission lets in a user with either permission", async () => {
    expect((await (await signedIn(["editor"])).get("/either")).statusCode).toBe(200);
    expect((await (await signedIn([])).get("/either")).statusCode).toBe(403);
  });

  it("requireAllPermissions needs every permission", async () => {
    expect((await (await signedIn(["editor"])).get("/both")).statusCode).toBe(403);
    expect((await (await signedIn(["editor", "admin"])).get("/both")).statusCode).toBe(200);
  });
});
