// What the rolling test reports and checks across a whole run: the steps it went through, the requests of each by
// status, the longest request, and every answer that breaks the rules.
import type { Outcome, RequestLog } from "@tessera/test-support/drill";

export interface Step {
  name: string;
  at: number;
}

/** Requests whose 4xx is the expected answer: a used code or a retired refresh token presented again on purpose. */
const refusalExpected = (kind: string) => /used code|retired refresh/.test(kind);

/**
 * Answers that break the rules: no answer (a reset or refused connection), any 5xx, a 401 or 403 (a credential that
 * was valid refused, or the administrator signed out), and any other 4xx but the refusals the checks ask for.
 */
export function failedRequests(outcomes: readonly Outcome[]): string[] {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    const failed = outcome.status === 0 || outcome.status >= 500 || (outcome.status >= 400 && !refusalExpected(outcome.kind));
    if (!failed) continue;
    const key = `${outcome.kind} at ${outcome.service}: ${outcome.status === 0 ? `no answer${outcome.detail === null ? "" : ` (${outcome.detail})`}` : outcome.status} ${outcome.detail?.slice(0, 160) ?? ""}`.trim();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${key} ×${count}`);
}

/** The requests of each step by status (all kinds together), and the longest request of the run. */
export function stepFigures(log: RequestLog, steps: readonly Step[], end: number): { table: string[]; longest: Outcome | null } {
  const table: string[] = [];
  for (const [index, step] of steps.entries()) {
    const until = steps[index + 1]?.at ?? end;
    const outcomes = log.between(step.at, until);
    const byStatus = new Map<number, number>();
    for (const outcome of outcomes) byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1);
    const statuses = [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${count}`)
      .join(", ");
    table.push(`${step.name} (${((until - step.at) / 1000).toFixed(1)} s): ${outcomes.length} requests; ${statuses}`);
  }
  let longest: Outcome | null = null;
  for (const outcome of log.outcomes) if (longest === null || outcome.at - outcome.sentAt > longest.at - longest.sentAt) longest = outcome;
  return { table, longest };
}
