/**
 * A browser over real HTTP with one cookie jar for every Sign-on instance:
 * like a real browser, it sends a host's cookies whatever the port, so a
 * session started on one instance is presented to the other.
 */
export class Browser {
  private readonly jar = new Map<string, string>();
  /** How many times the sign-in form was filled in. */
  signIns = 0;

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size > 0) headers.set("cookie", [...this.jar].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
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
   * Opens `authorizeUrl` on a Sign-on instance, signs in with `email` and
   * `password` if a sign-in form is shown (posting it to `signInAt`, by
   * default the same instance), and follows redirects on the first instance
   * until one leaves it: the redirect to the client, which is returned.
   */
  async authorize(authorizeUrl: string, email: string, password: string, signInAt?: string): Promise<URL> {
    const instance = new URL(authorizeUrl).origin;
    let response = await this.request(authorizeUrl, { headers: { accept: "text/html" } });
    for (let hops = 0; hops < 10; hops++) {
      const page = response.status === 200 ? await response.text() : "";
      if (page.includes('action="/sign-in"')) {
        const form = signInForm(page);
        this.signIns += 1;
        response = await this.request(`${signInAt ?? instance}/sign-in`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
          body: new URLSearchParams({ _csrf: form.csrfToken, return_to: form.returnTo, email, password }).toString(),
        });
        continue;
      }
      const location = response.headers.get("location");
      if (location === null) throw new Error(`stopped at ${response.status}: ${page || (await response.text())}`);
      const target = new URL(location, instance);
      if (target.pathname.startsWith("/oauth/") || target.pathname.startsWith("/sign-in") || target.origin === instance) {
        response = await this.request(`${instance}${target.pathname}${target.search}`, { headers: { accept: "text/html" } });
        continue;
      }
      return target;
    }
    throw new Error("too many redirects");
  }
}

function signInForm(html: string): { csrfToken: string; returnTo: string } {
  const csrfToken = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1];
  if (csrfToken === undefined || returnTo === undefined) throw new Error(`no sign-in form in:\n${html}`);
  return { csrfToken: decodeEntities(csrfToken), returnTo: decodeEntities(returnTo) };
}

function decodeEntities(value: string): string {
  return value
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
