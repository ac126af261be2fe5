// Every request the failover load sends, with its outcome: which instance answered, the status (0: no HTTP
// answer at all), Retry-After, and when it was sent and answered; and an HTTP client with a cookie jar that
// writes into it.
import { CookieJar, type ServiceProcess } from "@tessera/test-support";

export interface Outcome {
  /** What was asked, e.g. `POST /token (refresh)`. */
  kind: string;
  /** The instance asked (its ServiceProcess name). */
  service: string;
  /** The HTTP status; 0 when no answer came. */
  status: number;
  retryAfter: string | null;
  /** The start of the body of an answer of 400 or more, for the report. */
  detail: string | null;
  sentAt: number;
  at: number;
}

/** An answer as the load looks at it. */
export interface Answer {
  status: number;
  location: string | null;
  body: string;
}

/** How long a request may wait for its answer before it counts as unanswered. */
const requestTimeoutMs = 20_000;

export class RequestLog {
  readonly outcomes: Outcome[] = [];

  /** Outcomes of `kind` (or of any kind `kind` accepts), sent in [from, to). */
  between(from: number, to: number, kind?: (kind: string) => boolean): Outcome[] {
    return this.outcomes.filter((outcome) => outcome.sentAt >= from && outcome.sentAt < to && (kind === undefined || kind(outcome.kind)));
  }

  /** Answers that break the rules at any time: a 5xx other than 503, a 503 without Retry-After, no answer at all. */
  failures(outcomes: readonly Outcome[] = this.outcomes): string[] {
    const counts = new Map<string, number>();
    for (const outcome of outcomes) {
      const problem =
        outcome.status === 0
          ? "no answer"
          : outcome.status === 503 && outcome.retryAfter === null
            ? "503 without Retry-After"
            : outcome.status >= 500 && outcome.status !== 503
              ? String(outcome.status)
              : null;
      if (problem === null) continue;
      const key = `${outcome.kind} at ${outcome.service}: ${problem}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([key, count]) => `${key} ×${count}`);
  }

  /** Status counts per kind, e.g. `{"POST /token (code)": {"200": 40, "503": 3}}`. */
  summary(outcomes: readonly Outcome[] = this.outcomes): Record<string, Record<string, number>> {
    const kinds = new Map<string, Map<number, number>>();
    for (const { kind, status } of outcomes) {
      const statuses = kinds.get(kind) ?? new Map<number, number>();
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      kinds.set(kind, statuses);
    }
    return Object.fromEntries(
      [...kinds].sort(([a], [b]) => a.localeCompare(b)).map(([kind, statuses]) => [kind, Object.fromEntries([...statuses].sort(([a], [b]) => a - b))]),
    );
  }
}

/**
 * HTTP over `fetch` with a cookie jar (one browser: the cookies of every instance of a service, which share
 * their sessions through the database), each request recorded in `log`. Redirects are not followed.
 */
export class HttpClient {
  readonly #jar = new CookieJar();

  constructor(private readonly log: RequestLog) {}

  async send(kind: string, service: ServiceProcess, path: string, init: RequestInit & { form?: Record<string, string | string[]> } = {}): Promise<Answer> {
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
      this.log.outcomes.push({ kind, service: service.name, status, retryAfter, detail, sentAt, at: Date.now() });
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${service.url}${path}`, { ...init, headers, body: body ?? null, redirect: "manual", signal: AbortSignal.timeout(requestTimeoutMs) });
      text = await response.text();
    } catch {
      record(0, null, null);
      return { status: 0, location: null, body: "" };
    }
    this.#jar.take(response);
    record(response.status, response.headers.get("retry-after"), response.status >= 400 ? text.slice(0, 300) : null);
    return { status: response.status, location: response.headers.get("location"), body: text };
  }
}
