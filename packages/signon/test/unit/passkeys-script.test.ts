import { readFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";

const script = readFileSync(new URL("../../src/assets/passkeys.js", import.meta.url), "utf8");

/** The parts of a DOM element the script touches. */
class FakeElement {
  hidden = true;
  disabled = false;
  className = "hint";
  href = "";
  textContent = "";
  readonly attributes = new Map<string, string>();
  readonly children: (FakeElement | string)[] = [];
  readonly listeners = new Map<string, (event: { preventDefault(): void }) => void>();
  readonly elements = { _csrf: { value: "csrf-token" }, response: { value: "" } };
  constructor(readonly parts: Record<string, FakeElement> = {}) {}
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  querySelector(selector: string): FakeElement | null {
    return this.parts[selector] ?? null;
  }
  addEventListener(type: string, listener: (event: { preventDefault(): void }) => void): void {
    this.listeners.set(type, listener);
  }
  replaceChildren(...children: (FakeElement | string)[]): void {
    this.children.splice(0, this.children.length, ...children);
  }
  /** The text a person reads, links included. */
  get text(): string {
    return this.children.map((child) => (typeof child === "string" ? child : child.textContent)).join("") || this.textContent;
  }
}

/** Runs the page script on a page at `pageUrl` with one passkey form whose data-passkey-origin is `passkeyOrigin`. */
function runOnPage(pageUrl: string, passkeyOrigin: string) {
  const status = new FakeElement();
  const button = new FakeElement();
  const form = new FakeElement({ "[data-passkey-status]": status, "button[type=submit]": button });
  form.setAttribute("data-passkey", "authenticate");
  form.setAttribute("data-options-url", "/sign-in/passkey/options");
  form.setAttribute("data-passkey-origin", passkeyOrigin);
  const ceremonies: string[] = [];
  const fetches: string[] = [];
  const location = new URL(pageUrl);
  const window = { PublicKeyCredential: function PublicKeyCredential() {}, location };
  runInNewContext(script, {
    window,
    location,
    navigator: {
      credentials: {
        create: async () => ceremonies.push("create"),
        get: async () => ceremonies.push("get"),
      },
    },
    document: {
      querySelectorAll: (selector: string) => (selector === "form[data-passkey]" ? [form] : []),
      createElement: () => new FakeElement(),
    },
    fetch: async (url: string) => {
      fetches.push(url);
      return { ok: false, status: 500 };
    },
  });
  const submit = () => {
    let prevented = false;
    form.listeners.get("submit")?.({ preventDefault: () => (prevented = true) });
    return prevented;
  };
  return { form, status, button, ceremonies, fetches, submit };
}

describe("passkeys.js", () => {
  it("at another host than the public URL's, says where passkeys work, links there, and starts no ceremony", async () => {
    const page = runOnPage("http://127.0.0.1:3000/sign-in?return_to=%2Faccount", "http://localhost:3000");

    expect(page.form.hidden).toBe(false);
    expect(page.status.text).toBe(
      "Passkeys work only at http://localhost:3000, the address of Tessera Sign-on, and this page is open at http://127.0.0.1:3000. " +
        "To use a passkey, go to http://localhost:3000/sign-in?return_to=%2Faccount.",
    );
    const link = page.status.children.find((child): child is FakeElement => typeof child !== "string");
    expect(link?.href).toBe("http://localhost:3000/sign-in?return_to=%2Faccount");
    // An error, not the grey hint, and read out when it appears.
    expect(page.status.className).toBe("error-message");
    expect(page.status.getAttribute("role")).toBe("alert");
    expect(page.button.disabled).toBe(true);

    expect(page.submit()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(page.fetches).toEqual([]);
    expect(page.ceremonies).toEqual([]);
  });

  it("at another port of the same host, says the same: the server accepts answers from its public origin only", () => {
    const page = runOnPage("http://localhost:3100/account/passkeys", "http://localhost:3000");
    expect(page.status.text).toContain("To use a passkey, go to http://localhost:3000/account/passkeys.");
    expect(page.button.disabled).toBe(true);
  });

  it("at the public URL, leaves the hint alone and starts the ceremony on submit", async () => {
    const page = runOnPage("http://localhost:3000/sign-in", "http://localhost:3000");

    expect(page.status.text).toBe("");
    expect(page.status.className).toBe("hint");
    expect(page.button.disabled).toBe(false);

    expect(page.submit()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The options are asked for first (this fake server fails), as before.
    expect(page.fetches).toEqual(["/sign-in/passkey/options"]);
    expect(page.status.text).toBe("Sign-on could not start. Reload the page and try again.");
  });
});
