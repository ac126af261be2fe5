/**
 * A browser over real HTTP for pages on several origins of one host: one
 * cookie jar per host name (as browsers share cookies across ports), redirects
 * followed by hand, and Sign-on's sign-in form filled in when it is shown.
 */
export class CookieBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  constructor(private readonly signIn: { email: string; password: string }) {}

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const jar = this.jarOf(target.hostname);
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const equals = pair.indexOf("=");
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      if (value === "" || /max-age=0/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }

  private jarOf(hostname: string): Map<string, string> {
    let jar = this.jars.get(hostname);
    if (!jar) this.jars.set(hostname, (jar = new Map()));
    return jar;
  }

  /**
   * Opens `url` and follows redirects, signing in whenever Sign-on shows its
   * form, until a page answers. Returns that page and every URL passed through.
   */
  async visit(url: string): Promise<{ response: Response; body: string; visited: string[] }> {
    const visited = [url];
    let response = await this.request(url);
    for (let hops = 0; hops < 15; hops++) {
      const location = response.headers.get("location");
      if (location) {
        const next = new URL(location, response.url || visited.at(-1)).href;
        visited.push(next);
        response = await this.request(next);
        continue;
      }
      const body = await response.text();
      const form = signInForm(body);
      if (!form) return { response, body, visited };
      const action = new URL("/sign-in", visited.at(-1)).href;
      response = await this.request(action, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...form, ...this.signIn }).toString(),
      });
      visited.push(action);
    }
    throw new Error(`too many redirects: ${visited.join(" → ")}`);
  }
}

/** The hidden fields of Sign-on's sign-in form, or `null` when the page has none. */
function signInForm(page: string): { _csrf: string; return_to: string } | null {
  if (!page.includes('action="/sign-in"')) return null;
  const hidden = (name: string) => decodeEntities(new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? "");
  return { _csrf: hidden("_csrf"), return_to: hidden("return_to") };
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
    if (entity.startsWith("#x") || entity.startsWith("#X")) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith("#")) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
    return named[entity.toLowerCase()] ?? "";
  });
}
