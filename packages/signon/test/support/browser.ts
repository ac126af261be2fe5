import type { FastifyInstance, LightMyRequestResponse } from "fastify";

/**
 * A browser for `app.inject()`: keeps cookies, fills in the sign-in form
 * (CSRF token included) and follows redirects within the service.
 */
export class InjectBrowser {
  private readonly cookies = new Map<string, string>();

  /**
   * `remoteAddress`: the client address the requests come from
   * (light-my-request's default, 127.0.0.1, when not given); `headers`:
   * sent with every request (a proxy's `x-forwarded-for`, say).
   */
  constructor(
    private readonly app: FastifyInstance,
    private readonly options: { remoteAddress?: string; headers?: Record<string, string> } = {},
  ) {}

  private get from(): { remoteAddress?: string } {
    return this.options.remoteAddress === undefined ? {} : { remoteAddress: this.options.remoteAddress };
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  /** Plants a cookie, as an attacker or a stale tab might. */
  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.remember(await this.app.inject({ method: "GET", url, ...this.from, headers: { ...this.options.headers, cookie: this.cookieHeader, accept: "text/html" } }));
  }

  async postForm(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.remember(
      await this.app.inject({
        method: "POST",
        url,
        ...this.from,
        headers: { ...this.options.headers, cookie: this.cookieHeader, "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams(fields).toString(),
      }),
    );
  }

  /** Posts a JSON body, as the pages' script does with `fetch`. */
  async postJson(url: string, body: unknown): Promise<LightMyRequestResponse> {
    return this.remember(
      await this.app.inject({
        method: "POST",
        url,
        ...this.from,
        headers: { ...this.options.headers, cookie: this.cookieHeader, "content-type": "application/json", accept: "application/json" },
        payload: JSON.stringify(body),
      }),
    );
  }

  /** GETs `url` and follows redirects that stay on this service; returns the last response. */
  async follow(response: LightMyRequestResponse, limit = 5): Promise<LightMyRequestResponse> {
    let current = response;
    for (let i = 0; i < limit; i++) {
      const location = current.headers.location;
      if (current.statusCode < 300 || current.statusCode >= 400 || typeof location !== "string" || !location.startsWith("/")) break;
      current = await this.get(location);
    }
    return current;
  }

  /** Signs in through the sign-in form shown at `url` (or the page it redirects to). */
  async signIn(url: string, email: string, password: string): Promise<LightMyRequestResponse> {
    const page = await this.follow(await this.get(url));
    const form = parseSignInForm(page.body);
    return this.postForm("/sign-in", { _csrf: form.csrfToken, return_to: form.returnTo, email, password });
  }

  /**
   * Posts a form of the web interface as a person would: opens `pageUrl`
   * (a page showing the form) for a fresh CSRF token, then posts `fields`
   * to `action`. Returns the response to the post (not followed).
   */
  async submit(pageUrl: string, action: string, fields: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const page = await this.get(pageUrl);
    const csrfToken = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1];
    if (csrfToken === undefined) throw new Error(`no CSRF token on ${pageUrl} (status ${page.statusCode}):\n${page.body}`);
    return this.postForm(action, { _csrf: decodeEntities(csrfToken), ...fields });
  }

  private remember(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of response.cookies) {
      if (cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() < Date.now())) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }
}

/** Reads the hidden fields of the sign-in form. */
export function parseSignInForm(html: string): { csrfToken: string; returnTo: string } {
  const csrfToken = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1];
  if (csrfToken === undefined || returnTo === undefined) throw new Error(`no sign-in form in:\n${html}`);
  return { csrfToken: decodeEntities(csrfToken), returnTo: decodeEntities(returnTo) };
}

/** Decodes the HTML entities the page templates write (`&#39; &quot; &lt; &gt; &amp;`). */
export function decodeEntities(value: string): string {
  return value
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** A browser signed in to the app as `email` through the sign-in form. */
export async function signedInBrowser(app: FastifyInstance, email: string, password: string): Promise<InjectBrowser> {
  const browser = new InjectBrowser(app);
  const response = await browser.signIn("/sign-in", email, password);
  if (response.statusCode !== 303) throw new Error(`sign-in as ${email} failed with ${response.statusCode}:\n${response.body}`);
  return browser;
}
