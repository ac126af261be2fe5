import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resolveStaleRecords } from "../../src/aggregation/stale.js";
import { startStaleWorker } from "../../src/aggregation/stale-worker.js";
import type { BulkBlock } from "../../src/ingest/bulk-format.js";
import { aggregateMismatches } from "../support/consistency.js";
import { block, COURSE, COURSE_TREE, load, OTHER_COURSE, OTHER_TREE } from "../support/data.js";
import { useHarness } from "../support/harness.js";

/**
 * Completion's writers and its stale-refreshing reads at once, as on a busy
 * service: each round sends, all together, a bulk load that changes the
 * course's tree (every learner of the course becomes stale) and stores some
 * completions, a completion batch per learner, and per learner a list read
 * and a detail read (which recompute a stale learner before answering),
 * while the stale worker runs. Every request must succeed (never a 500 or a
 * 503), no acknowledged completion may be lost, and afterwards every stored
 * aggregate must equal a recomputation from scratch. The lock order of
 * `src/aggregation/README.md` keeps deadlocks from forming at all, so none
 * may have been retried.
 */

const ROUNDS = 12;
const LEARNERS = 8;
const METRICS_TOKEN = "concurrency-metrics-token-0123456789";

const h = await useHarness({ callerCacheSeconds: 30, app: { metricsToken: METRICS_TOKEN } });

/** The course's tree with one more problem in its first vertical: loading it marks every learner of the course stale. */
const GROWN_TREE: BulkBlock = JSON.parse(JSON.stringify(COURSE_TREE).replace('{"type":"problem","id":"p1"}', '{"type":"problem","id":"p1"},{"type":"problem","id":"p9"}'));

const learner = (n: number): string => `l${n}`;
const learners = Array.from({ length: LEARNERS }, (_, index) => index + 1);

/** Bulk loads write p2 of the first half of the learners; batches write p1 and h1 of everyone: no cell has two writers. */
const bulkWrites = (n: number): boolean => n <= LEARNERS / 2;

interface Sent {
  name: string;
  status: number;
  body: string;
}

describe("concurrent reads of stale learners, completion batches, bulk loads and the stale worker", () => {
  it(`answer ${ROUNDS} rounds without a failure, lose no completion and leave aggregates as a recomputation gives them`, async () => {
    await load(h.ctx, {
      courses: [
        { course_key: COURSE, structure: COURSE_TREE },
        { course_key: OTHER_COURSE, structure: OTHER_TREE },
      ],
      users: learners.map((n) => ({ id: n, username: learner(n), email: `${learner(n)}@example.com` })),
      enrollments: learners.flatMap((n) => [
        { username: learner(n), course_key: COURSE },
        { username: learner(n), course_key: OTHER_COURSE },
      ]),
    });
    const caller = `Bearer ${(await h.signon.tokenFor("concurrency-ops@example.com", ["staff", "admin"], { apiUser: true })).token}`;
    const send = async (name: string, method: "GET" | "POST" | "PUT", url: string, payload?: unknown): Promise<Sent> => {
      const response = await h.app.inject({
        method,
        url,
        headers: { authorization: caller },
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
      return { name, status: response.statusCode, body: response.body.slice(0, 300) };
    };

    /** The last value acknowledged for each (learner, block), which the database must hold at the end. */
    const acknowledged = new Map<string, number>();
    const sent: Sent[] = [];
    const workerErrors: unknown[] = [];
    const worker = startStaleWorker(h.ctx, { intervalMs: 5, batch: 20, onError: (error) => void workerErrors.push(error) });
    try {
      for (let round = 1; round <= ROUNDS; round += 1) {
        const value = (n: number): number => (round * LEARNERS + n) / ((ROUNDS + 1) * LEARNERS);
        const bulk = {
          courses: [{ course_key: COURSE, structure: round % 2 === 1 ? GROWN_TREE : COURSE_TREE }],
          enrollments: learners.map((n) => ({ username: learner(n), course_key: COURSE })),
          completions: learners.filter(bulkWrites).map((n) => ({ username: learner(n), course_key: COURSE, block_key: block("problem", "p2"), completion: value(n) })),
        };
        const requests: Promise<void>[] = [
          send("bulk load", "PUT", "/api/completion/v1/admin/import", bulk).then((result) => {
            sent.push(result);
            if (result.status === 200) for (const n of learners.filter(bulkWrites)) acknowledged.set(`${n} p2`, value(n));
          }),
        ];
        for (const n of learners) {
          const blocks = { [block("problem", "p1")]: value(n), [block("html", "h1")]: 1 - value(n) };
          requests.push(
            send(`batch of ${learner(n)}`, "POST", "/api/completion/v1/completion-batch", { username: learner(n), course_key: COURSE, blocks }).then((result) => {
              sent.push(result);
              if (result.status === 200) {
                acknowledged.set(`${n} p1`, value(n));
                acknowledged.set(`${n} h1`, 1 - value(n));
              }
            }),
            send(`detail of ${learner(n)}`, "GET", `/api/completion/v1/course/${COURSE}/?username=${learner(n)}&requested_fields=chapter,vertical`).then((result) => void sent.push(result)),
            send(`list of ${learner(n)}`, "GET", `/api/completion/v1/course/?username=${learner(n)}&requested_fields=chapter`).then((result) => void sent.push(result)),
          );
        }
        await Promise.all(requests);
      }
    } finally {
      await worker.stop();
    }

    const failed = sent.filter((result) => result.status !== 200).map((result) => `${result.name}: ${result.status} ${result.body}`);
    expect(failed).toEqual([]);
    expect(sent).toHaveLength(ROUNDS * (1 + 3 * LEARNERS));
    expect(workerErrors.map(String)).toEqual([]);

    // What the worker left: the stale records of the last round's tree change.
    while ((await resolveStaleRecords(h.ctx.db, h.ctx.structures, h.ctx.settings, 100, h.ctx.now)) > 0);
    const unresolved = await h.database.db.execute<{ n: number }>(sql`select count(*)::int as n from completion.stale_completions where not resolved`);
    expect(unresolved.rows[0]!.n).toBe(0);

    const stored = await h.database.db.execute<{ learner_id: number; block_key: string; completion: number }>(
      sql`select learner_id, block_key, completion from completion.block_completions where course_key = ${COURSE}`,
    );
    const storedCells = new Map(stored.rows.map((row) => [`${row.learner_id} ${row.block_key.replace(/.*block@/, "")}`, Number(row.completion)]));
    expect(storedCells).toEqual(acknowledged);
    expect(await aggregateMismatches(h.ctx)).toEqual([]);

    const metrics = (await h.app.inject({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
    const retried = [...metrics.matchAll(/^database_transaction_retries_total\{reason="(\w+)"\} (\d+)$/gm)].map(([, reason, count]) => `${reason} ${count}`);
    console.info(`concurrent writers: ${ROUNDS} rounds, ${sent.length} requests, 5xx: 0, retries: ${retried.join(", ") || "none"}`);
    // The lock order leaves no deadlock to retry.
    expect(retried.filter((line) => !line.endsWith(" 0"))).toEqual([]);
  }, 300_000);
});
