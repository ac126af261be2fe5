import type { Outcome, RequestRecorder } from "@tessera/test-support/drill";

/** Status counts per kind of request; status 0 is a request that got no HTTP answer at all. */
export class Tally implements RequestRecorder {
  readonly counts = new Map<string, Map<number, number>>();

  record({ kind, status }: Pick<Outcome, "kind" | "status">): void {
    const statuses = this.counts.get(kind) ?? new Map<number, number>();
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    this.counts.set(kind, statuses);
  }

  /** Every request counted. */
  get total(): number {
    return this.#sum(() => true);
  }

  /** Answers of status `status` (all kinds). */
  count(status: number): number {
    return this.#sum((candidate) => candidate === status);
  }

  /** 5xx answers other than 503, and requests without an answer, as `kind status` strings with counts. */
  failures(): string[] {
    const found: string[] = [];
    for (const [kind, statuses] of this.counts) {
      for (const [status, count] of statuses) if ((status >= 500 && status !== 503) || status === 0) found.push(`${kind} ${status || "no answer"} ×${count}`);
    }
    return found;
  }

  /** Status counts per kind, e.g. `{"POST /token": {"200": 40, "503": 3}}`. */
  summary(): Record<string, Record<string, number>> {
    return Object.fromEntries([...this.counts].map(([kind, statuses]) => [kind, Object.fromEntries([...statuses].sort(([a], [b]) => a - b))]));
  }

  #sum(include: (status: number) => boolean): number {
    let sum = 0;
    for (const statuses of this.counts.values()) for (const [status, count] of statuses) if (include(status)) sum += count;
    return sum;
  }
}
