// Every request the failover load sends, with its outcome: which instance answered, the status (0: no HTTP
// answer at all), Retry-After, and when it was sent and answered, as the HTTP client (http-client.ts) records it.

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

export class RequestLog {
  readonly outcomes: Outcome[] = [];

  record(outcome: Outcome): void {
    this.outcomes.push(outcome);
  }

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
