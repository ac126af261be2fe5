// The HTTP client of the loads: a browser's cookie jar over `fetch`, each request written down where the drill
// keeps them (the request log, or the fault test's tally), and the `_csrf` field of Sign-on's form pages.
import { CookieJar } from "../load-support.js";
import type { ServiceProcess } from "../shipped.js";
import type { Outcome } from "./request-log.js";

/** A response as the load loops look at it. */
export interface Answer {
  status: number;
  location: string | null;
  body: string;
  /** The `Retry-After` and `Content-Type` headers. */
  retryAfter: string | null;
  contentType: string | null;
}

/** Where a client writes down each request it sent and what came back: a `RequestLog`, or a tally of statuses. */
export interface RequestRecorder {
  record(outcome: Outcome): void;
}

/** How long a request may wait for its answer (and its body) before it counts as unanswered, unless the client is given another bound. */
const requestTimeoutMs = 20_000;

/**
 * HTTP over `fetch` with a cookie jar (one browser: the cookies of every instance of a service, which share
 * their sessions through the database), each request recorded in `log` under a kind (`POST /token`); a request
 * that gets no answer at all (the service is down) is recorded as status 0. Redirects are not followed.
 */
export class HttpClient {
  readonly #jar = new CookieJar();

  constructor(
    private readonly log: RequestRecorder,
    private readonly timeoutMs = requestTimeoutMs,
  ) {}

  async send(
    kind: string,
    service: Pick<ServiceProcess, "name" | "url">,
    path: string,
    init: RequestInit & { form?: Record<string, string | string[]> } = {},
  ): Promise<Answer> {
    const headers = new Headers(init.headers);
    const cookie = this.#jar.header();
    if (cookie !== null) headers.set("cookie", cookie);
    let body = init.body;
    if (init.form) {
      headers.set("content-type", "application/x-www-form-urlencoded");
      const form = new URLSearchParams();
      for (const [name, value] of Object.entries(init.form)) for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
      body = form.toString();
    }
    const sentAt = Date.now();
    const record = (status: number, retryAfter: string | null, detail: string | null) =>
      this.log.record({ kind, service: service.name, status, retryAfter, detail, sentAt, at: Date.now() });
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${service.url}${path}`, { ...init, headers, body: body ?? null, redirect: "manual", signal: AbortSignal.timeout(this.timeoutMs) });
      text = await response.text();
    } catch {
      record(0, null, null);
      return { status: 0, location: null, body: "", retryAfter: null, contentType: null };
    }
    this.#jar.take(response);
    const retryAfter = response.headers.get("retry-after");
    record(response.status, retryAfter, response.status >= 400 ? text.slice(0, 300) : null);
    return { status: response.status, location: response.headers.get("location"), body: text, retryAfter, contentType: response.headers.get("content-type") };
  }
}

/** The value of the hidden `_csrf` field of a Sign-on form page. */
export function csrfTokenOf(html: string): string | undefined {
  const token = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  return token?.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
