/**
 * A small browser over `fetch` for end-to-end tests on real ports: keeps
 * cookies per host name, shared by all ports as real browsers do (name=value,
 * path /, no expiry handling beyond deletion), follows redirects one by one
 * and remembers where it went.
 */
export class HttpBrowser {
  readonly #cookies = new Map<string, Map<string, string>>();
  /** Every URL requested, in order (redirects included). */
  readonly visited: string[] = [];

  /** GETs `url` and follows redirects; returns the final response and its body. */
  async get(url: string): Promise<{ response: Response; body: string; url: string }> {
    return this.#follow(url, { method: "GET" });
  }

  /** POSTs an HTML form (`application/x-www-form-urlencoded`) and follows redirects. */
  async postForm(url: string, fields: Record<string, string>): Promise<{ response: Response; body: string; url: string }> {
    return this.#follow(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** The cookie `name` held for `origin`'s host. */
  cookie(origin: string, name: string): string | undefined {
    return this.#cookies.get(new URL(origin).hostname)?.get(name);
  }

  async #follow(start: string, init: RequestInit): Promise<{ response: Response; body: string; url: string }> {
    let url = start;
    let request = init;
    for (let hop = 0; hop < 10; hop += 1) {
      const response = await this.#send(url, request);
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || location === null) {
        return { response, body: await response.text(), url };
      }
      await response.arrayBuffer();
      url = new URL(location, url).toString();
      request = { method: "GET" };
    }
    throw new Error(`more than 10 redirects from ${start}`);
  }

  async #send(url: string, init: RequestInit): Promise<Response> {
    this.visited.push(url);
    const host = new URL(url).hostname;
    const jar = this.#cookies.get(host) ?? new Map<string, string>();
    this.#cookies.set(host, jar);
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const separator = pair.indexOf("=");
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (value === "" || expired) jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }
}
