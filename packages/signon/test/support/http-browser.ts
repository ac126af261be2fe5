import { parseSignInForm } from "./browser.js";

/**
 * A browser over real HTTP: a cookie jar, manual redirects, and the sign-in
 * form filled in from the page it is shown.
 */
export class HttpBrowser {
  private readonly jar = new Map<string, string>();

  constructor(private readonly origin: string) {}

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (new URL(url, this.origin).origin === this.origin && this.jar.size > 0) {
      headers.set("cookie", [...this.jar].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const response = await fetch(new URL(url, this.origin), { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const equals = pair.indexOf("=");
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      if (value === "" || /max-age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return response;
  }

  /**
   * Opens an authorization URL, signs in on the page it leads to, and follows
   * redirects until one leaves the service. Returns that last redirect target.
   */
  async authorize(authorizationUrl: string, email: string, password: string): Promise<URL> {
    let response = await this.request(authorizationUrl);
    for (let hops = 0; hops < 10; hops++) {
      const location = response.headers.get("location");
      const page = response.status === 200 ? await response.text() : "";
      if (page.includes('action="/sign-in"')) {
        const form = parseSignInForm(page);
        response = await this.request("/sign-in", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ _csrf: form.csrfToken, return_to: form.returnTo, email, password }).toString(),
        });
        continue;
      }
      if (!location) throw new Error(`stopped at ${response.status}: ${page || (await response.text())}`);
      const target = new URL(location, this.origin);
      if (target.origin !== this.origin) return target;
      response = await this.request(target.href);
    }
    throw new Error("too many redirects");
  }
}
