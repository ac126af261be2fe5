import type { Tally } from "./tally.js";
import { CookieJar } from "@tessera/test-support";

/** A response as the load loops look at it. */
export interface Answer {
  status: number;
  location: string | null;
  body: string;
  /** The `Retry-After` and `Content-Type` headers. */
  retryAfter: string | null;
  contentType: string | null;
}

/**
 * HTTP over `fetch` with a cookie jar, recording every answer's status in a
 * tally under a kind (`POST /token`); a request that gets no answer at all
 * (the service is down) is recorded as status 0. Redirects are not followed.
 */
export class HttpClient {
  readonly #jar = new CookieJar();

  constructor(private readonly tally: Tally) {}

  async send(kind: string, url: string, init: RequestInit & { form?: URLSearchParams } = {}): Promise<Answer> {
    const headers = new Headers(init.headers);
    const cookie = this.#jar.header();
    if (cookie !== null) headers.set("cookie", cookie);
    let body: RequestInit["body"] = init.body;
    if (init.form) {
      headers.set("content-type", "application/x-www-form-urlencoded");
      body = init.form.toString();
    }
    let response: Response;
    try {
      response = await fetch(url, { ...init, headers, body: body ?? null, redirect: "manual", signal: AbortSignal.timeout(30_000) });
    } catch {
      this.tally.record(kind, 0);
      return { status: 0, location: null, body: "", retryAfter: null, contentType: null };
    }
    this.#jar.take(response);
    const text = await response.text().catch(() => "");
    this.tally.record(kind, response.status);
    return {
      status: response.status,
      location: response.headers.get("location"),
      body: text,
      retryAfter: response.headers.get("retry-after"),
      contentType: response.headers.get("content-type"),
    };
  }
}

/** The value of the hidden `_csrf` field of a Sign-on form page. */
export function csrfTokenOf(html: string): string | undefined {
  const token = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  return token?.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
