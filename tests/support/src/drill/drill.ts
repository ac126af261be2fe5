// What the failover tests share: the services on the cluster, under the load, through one fault at a time (a
// round), and the checks after each round: no service exited, no 500, every acknowledged write there and working,
// every push delivered, every completion stored and aggregated, Completion's reads answered.
import { expect } from "vitest";
import { codeProblems, completionProblems, pushProblems, refreshProblems, tokenProblems } from "./checks.js";
import type { FailoverCluster } from "./cluster.js";
import { ErrorLines } from "./error-lines.js";
import { COURSE_KEY } from "./first-time-set-up.js";
import { HttpClient } from "./http-client.js";
import { COMPLETION_READ_KINDS, newLoadRecord, signInSessions, startLoad, type LoadRecord, type Sessions } from "./load.js";
import { RequestLog, type Outcome } from "./request-log.js";
import { startFailoverSystem, type FailoverSystem } from "./services.js";
import { waitFor } from "./wait.js";

/**
 * Each loop of the load stops after this many steps, whatever happens. It must outlast the longest round: the
 * quickest loop (Completion's stats, about 55 answers a second) ran out of 4,000 steps in a freeze round that took
 * 80 s to see every kind answered again, and the round then waited for stats that were no longer asked for.
 */
const maxSteps = 20_000;

/** Writes whose acknowledgement (this status) means a commit: the first after a fault measures the outage. */
export const acknowledgedWrites: Record<string, number> = {
  "POST /token (code)": 200,
  "POST /token (refresh)": 200,
  "POST /users/:uid/permissions": 303,
  "POST completion-batch": 200,
};
/** Reads that must have answered 200 a few times in each part of a round. */
const answeredReads: Record<string, number> = { "GET /user.json": 200, ...Object.fromEntries(COMPLETION_READ_KINDS.map((kind) => [kind, 200])) };

export const isAcknowledgedWrite = (outcome: Outcome) => acknowledgedWrites[outcome.kind] === outcome.status;

/** The first 20 problems of a list, and how many more there are: enough to see what failed, short enough to read. */
export const firstProblems = (problems: readonly string[]) => (problems.length > 20 ? [...problems.slice(0, 20), `… and ${problems.length - 20} more`] : [...problems]);

/** One round of load: when it started and stopped, and the fault it went through. */
export interface Round {
  name: string;
  record: LoadRecord;
  startedAt: number;
  stoppedAt: number;
  fault?: {
    /** When the fault began and when it was lifted (the same moment for a kill with nothing to lift). */
    at: number;
    liftedAt: number;
    /** The first write acknowledged after the fault began, if writes stopped at all. */
    firstWrite?: Outcome;
    /** The leader before and after. */
    leaders: [string, string];
  };
  /** What the checks afterwards covered, for the report. */
  checked?: Record<string, number>;
}

/** When writes had resumed after a round's fault (its start, for a round without one). */
function resumedAt(round: Round): number {
  return Math.max(round.fault?.liftedAt ?? 0, round.fault?.firstWrite?.at ?? 0, round.startedAt);
}

export interface RoundOptions {
  /**
   * Completion reads that may answer other than 200: those sent in these windows (a read routed to a replica
   * that froze, before the router skips it).
   */
  readsExcusedIn?: [number, number][];
}

export class Drill {
  /** The checks' own requests. */
  readonly checkLog = new RequestLog();
  readonly rounds: Round[] = [];
  /** The reading token of Completion's reads. */
  #readerToken = "";
  #readers = 0;

  private constructor(
    readonly cluster: FailoverCluster,
    readonly system: FailoverSystem,
    readonly sessions: Sessions,
    readonly errors: ErrorLines,
    /** Every request of the load (the sessions' clients write into it too). */
    readonly log: RequestLog,
  ) {}

  static async start(cluster: FailoverCluster): Promise<Drill> {
    const system = await startFailoverSystem(cluster);
    const errors = new ErrorLines(system.services);
    const log = new RequestLog();
    return new Drill(cluster, system, await signInSessions(system, log), errors, log);
  }

  async close(): Promise<void> {
    this.errors.stop();
    await this.system.close();
  }

  /**
   * Starts a round of load with a reading token resolved at both Completion instances just before (a new one
   * each round, so that none is remembered from an earlier round), runs `during` once every kind of request has
   * been answered a few times, then keeps the load going until every kind has been answered again after the
   * fault, and stops it.
   */
  async round(name: string, during: (round: Round) => Promise<NonNullable<Round["fault"]> | undefined>): Promise<Round> {
    const record = newLoadRecord(this.rounds.at(-1)?.record);
    const startedAt = Date.now();
    await this.resolveReaderToken(this.system.completionTokens.readers[this.#readers++ % 2]!);
    const load = startLoad(this.system, this.sessions, this.log, record, { readerToken: () => this.#readerToken, maxSteps });
    const round: Round = { name, record, startedAt, stoppedAt: startedAt };
    try {
      await this.loadUntilEachAnswered(startedAt, 5, 4000);
      const fault = await during(round);
      if (fault !== undefined) round.fault = fault;
      await this.loadUntilEachAnswered(resumedAt(round), 5, 4000);
    } finally {
      await load.stop();
    }
    round.stoppedAt = Date.now();
    this.rounds.push(round);
    return round;
  }

  /** The first write acknowledged after `since`, waited for. */
  firstWriteAfter(since: number, timeoutMs = 120_000): Promise<Outcome> {
    return waitFor("a write acknowledged", async () => this.log.outcomes.find((outcome) => outcome.sentAt >= since && isAcknowledgedWrite(outcome)) ?? null, {
      timeoutMs,
      intervalMs: 50,
    });
  }

  /** Answers 200 to a staff detail read with `token` at both Completion instances: each now remembers it. */
  async resolveReaderToken(token: string): Promise<void> {
    const client = new HttpClient(this.checkLog);
    for (const instance of this.system.completion) {
      const answer = await client.send("resolve reading token", instance, `/api/completion/v1/course/${COURSE_KEY}/`, { headers: { authorization: `Bearer ${token}` } });
      if (answer.status !== 200) throw new Error(`${instance.name} answered ${answer.status} to the reading token: ${answer.body}`);
    }
    this.#readerToken = token;
  }

  /** Waits until every kind of write and read was answered as it should `count` times since `since`, and at least `minMs` have passed. */
  async loadUntilEachAnswered(since: number, count: number, minMs: number): Promise<void> {
    const wanted = { ...acknowledgedWrites, ...answeredReads };
    await waitFor(
      `every kind of request answered ${count} times since ${new Date(since).toISOString()}`,
      async () => {
        if (Date.now() - since < minMs) return null;
        const recent = this.log.between(since, Infinity);
        const short = Object.entries(wanted).filter(([kind, status]) => recent.filter((outcome) => outcome.kind === kind && outcome.status === status).length < count);
        if (short.length > 0) throw new Error(`still short: ${short.map(([kind]) => `${kind} (${answersOf(recent, kind)})`).join(", ")}`);
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
  }

  /** The longest any request of the round (or any of Completion's reads, with `reads`) waited for its answer, in ms. */
  longestWait(round: Round, which: "all" | "reads" = "all"): number {
    const kind = which === "reads" ? (name: string) => COMPLETION_READ_KINDS.includes(name) : undefined;
    return Math.max(0, ...this.log.between(round.startedAt, round.stoppedAt, kind).map((outcome) => outcome.at - outcome.sentAt));
  }

  /** The assertions of a round once its load has stopped; `expect.soft` so that one failure does not hide the others. */
  async checkRound(round: Round, options: RoundOptions = {}): Promise<void> {
    const { system, log, checkLog } = this;
    const outcomes = log.between(round.startedAt, Infinity);
    const evidence = () => this.errors.lines().slice(-60).join("\n");

    for (const service of system.services) expect.soft(service.exit(), `${service.name} exited:\n${service.output().slice(-5000)}`).toBeNull();

    // No 500, a 503 only with Retry-After, every request answered.
    expect.soft(log.failures(outcomes), `error lines of the services:\n${evidence()}`).toEqual([]);

    // Completion's reads (from the replicas) answered 200 throughout.
    const excused = (outcome: Outcome) => (options.readsExcusedIn ?? []).some(([from, to]) => outcome.sentAt >= from && outcome.sentAt < to);
    const failedReads = outcomes.filter((outcome) => COMPLETION_READ_KINDS.includes(outcome.kind) && outcome.status !== 200 && !excused(outcome));
    const readProblems = failedReads.map(
      (outcome) => `${outcome.kind} at ${outcome.service} sent ${outcome.sentAt - (round.fault?.at ?? round.startedAt)} ms after the ${round.fault ? "fault" : "start"}: ${outcome.status} ${outcome.detail ?? ""}`,
    );
    expect.soft(firstProblems(readProblems), `error lines of the services:\n${evidence()}`).toEqual([]);

    // Every acknowledged token there, and working; the refresh tokens rotated, and the codes used, refused again.
    expect.soft(firstProblems(await tokenProblems(system, round.record, checkLog))).toEqual([]);
    // A round with a fault counts what was retired or used before it; the other rounds, everything.
    const before = round.fault?.at ?? round.stoppedAt;
    const beforeWhat = round.fault ? "before the fault" : "in the round";
    const refresh = await refreshProblems(system, round.record.chains, checkLog, before);
    expect.soft(firstProblems(refresh.problems)).toEqual([]);
    expect.soft(refresh.retiredBefore, `refresh tokens retired ${beforeWhat}, presented again`).toBeGreaterThan(0);
    const codes = await codeProblems(system, round.record.chains, checkLog, before);
    expect.soft(firstProblems(codes.problems)).toEqual([]);
    expect.soft(codes.usedBefore, `codes used ${beforeWhat}, presented again`).toBeGreaterThan(0);

    // The permission changes kept, and every push delivered to the editorial app: some of them after the fault (pushes resumed).
    const pushes = await pushProblems(system, round.record, resumedAt(round));
    expect.soft(firstProblems(pushes.problems)).toEqual([]);
    expect.soft(pushes.deliveredSince, round.fault ? "pushes delivered after the fault" : "pushes delivered in the round").toBeGreaterThan(0);

    // Every acknowledged completion stored, and aggregated as Completion reads it back.
    expect.soft(firstProblems(await completionProblems(system, round.record, checkLog))).toEqual([]);

    round.checked = {
      accessTokens: round.record.chains.reduce((sum, chain) => sum + 1 + chain.rotations.length, 0),
      retiredRefreshTokens: round.record.chains.reduce((sum, chain) => sum + chain.rotations.length, 0),
      codes: round.record.chains.length,
      ...(round.fault ? { retiredRefreshTokensBeforeFault: refresh.retiredBefore, codesUsedBeforeFault: codes.usedBefore } : {}),
      [round.fault ? "pushesDeliveredAfterFault" : "pushesDelivered"]: pushes.deliveredSince,
      completionBatchesAcknowledged: log.between(round.startedAt, round.stoppedAt, (kind) => kind === "POST completion-batch").filter((outcome) => outcome.status === 200).length,
    };

    // The checks' own requests: no 500 either.
    expect.soft(checkLog.failures(), `error lines of the services:\n${evidence()}`).toEqual([]);
  }

  /** Each round's figures: requests, 5xx by status, the longest wait, the seconds to the first write after the fault. */
  report(): object[] {
    return this.rounds.map((round) => {
      const outcomes = this.log.between(round.startedAt, round.stoppedAt);
      const byStatus: Record<string, number> = {};
      for (const outcome of outcomes) if (outcome.status >= 500 || outcome.status === 0) byStatus[outcome.status] = (byStatus[outcome.status] ?? 0) + 1;
      const fault = round.fault;
      return {
        round: round.name,
        seconds: Math.round((round.stoppedAt - round.startedAt) / 100) / 10,
        requests: outcomes.length,
        answered5xx: byStatus,
        longestWaitMs: this.longestWait(round),
        longestCompletionReadMs: this.longestWait(round, "reads"),
        ...(fault
          ? {
              faultSeconds: Math.round((fault.liftedAt - fault.at) / 100) / 10,
              leaders: fault.leaders.join(" → "),
              firstWriteAfterFaultMs: fault.firstWrite ? fault.firstWrite.at - fault.at : null,
            }
          : {}),
        chains: round.record.chains.length,
        rotations: round.record.chains.reduce((sum, chain) => sum + chain.rotations.length, 0),
        checked: round.checked,
        byRequest: this.log.summary(outcomes),
      };
    });
  }
}

/** What the instances answered to one kind of request, for a wait's error: `stats at completion-1: 503 ×12 "…"`. */
function answersOf(outcomes: readonly Outcome[], kind: string): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    if (outcome.kind !== kind) continue;
    const key = `${outcome.service} ${outcome.status}${outcome.detail === null ? "" : ` ${JSON.stringify(outcome.detail.slice(0, 80))}`}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts.size === 0 ? "none sent" : [...counts].map(([key, count]) => `${key} ×${count}`).join("; ");
}
