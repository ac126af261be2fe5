// Transactions that PostgreSQL ends with a deadlock or a serialization
// failure run again, a bounded number of times, and are counted per pool.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { createDrizzle, createPool, transactionConflict, transactionRetryFigures, TRANSACTION_ATTEMPTS } from "../src/index.js";
import { retryDelayMs } from "../src/transaction-retries.js";
import { useTestDatabase } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

const t = await useTestDatabase({ migrations: [fixtureMigrations], schema });
afterAll(() => t.close());
beforeEach(() => t.reset());

/** A pool and drizzle instance of the test's own, so the figures start at zero. */
function freshDatabase() {
  const pool = createPool({ url: t.url, max: 4 });
  return { pool, db: createDrizzle(pool, schema) };
}

/** An error as drizzle throws it around a server message with a SQLSTATE. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(`Failed query: update …\nparams: …`), { cause: Object.assign(new Error(message), { code, severity: "ERROR" }) });
}

/** A promise and its resolver, to make two transactions take turns. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe("a transaction PostgreSQL ends for a concurrent one", () => {
  it("runs the deadlock's victim again, once the other has committed, and counts it", async () => {
    const { pool, db } = freshDatabase();
    try {
      await db.insert(schema.counters).values([{ name: "a" }, { name: "b" }]);
      const runs = { ab: 0, ba: 0 };
      const locked = { ab: signal(), ba: signal() };
      // Each takes one row, waits until the other has taken the other row, then wants it: a cycle, one run only.
      const crossing = (first: "a" | "b", second: "a" | "b", mine: "ab" | "ba", theirs: "ab" | "ba") =>
        db.transaction(async (tx) => {
          runs[mine] += 1;
          await tx.update(schema.counters).set({ value: sql`${schema.counters.value} + 1` }).where(eq(schema.counters.name, first));
          if (runs[mine] === 1) {
            locked[mine].resolve();
            await locked[theirs].promise;
          }
          await tx.update(schema.counters).set({ value: sql`${schema.counters.value} + 10` }).where(eq(schema.counters.name, second));
        });
      await Promise.all([crossing("a", "b", "ab", "ba"), crossing("b", "a", "ba", "ab")]);

      // One of them ran twice; both committed exactly once.
      expect(runs.ab + runs.ba).toBe(3);
      expect(await db.select().from(schema.counters).orderBy(schema.counters.name)).toEqual([
        { name: "a", value: 11 },
        { name: "b", value: 11 },
      ]);
      expect(transactionRetryFigures(pool)).toEqual({ retried: { deadlock: 1, serialization_failure: 0 }, gaveUp: { deadlock: 0, serialization_failure: 0 } });
    } finally {
      await pool.end();
    }
  });

  it("runs a serialization failure of REPEATABLE READ again, and the second run sees the other's write", async () => {
    const { pool, db } = freshDatabase();
    try {
      await db.insert(schema.counters).values({ name: "a" });
      const seen: number[] = [];
      const read = signal();
      const written = signal();
      const increment = db.transaction(
        async (tx) => {
          const [row] = await tx.select().from(schema.counters).where(eq(schema.counters.name, "a"));
          seen.push(row!.value);
          if (seen.length === 1) {
            read.resolve();
            await written.promise;
          }
          await tx.update(schema.counters).set({ value: row!.value + 1 }).where(eq(schema.counters.name, "a"));
        },
        { isolationLevel: "repeatable read" },
      );
      await read.promise;
      await db.update(schema.counters).set({ value: 100 }).where(eq(schema.counters.name, "a"));
      written.resolve();
      await increment;

      expect(seen).toEqual([0, 100]);
      expect((await db.select().from(schema.counters))[0]!.value).toBe(101);
      expect(transactionRetryFigures(pool).retried).toEqual({ deadlock: 0, serialization_failure: 1 });
    } finally {
      await pool.end();
    }
  });

  it(`gives up after ${TRANSACTION_ATTEMPTS} runs with the last run's error, rolled back, and counts it`, async () => {
    const { pool, db } = freshDatabase();
    try {
      let runs = 0;
      const failure = db.transaction(async (tx) => {
        runs += 1;
        await tx.insert(schema.notes).values({ title: `run ${runs}` });
        throw serverError("40P01", "deadlock detected");
      });
      await expect(failure).rejects.toMatchObject({ cause: { code: "40P01" } });
      expect(runs).toBe(TRANSACTION_ATTEMPTS);
      expect(await db.select().from(schema.notes)).toEqual([]);
      expect(transactionRetryFigures(pool)).toEqual({
        retried: { deadlock: TRANSACTION_ATTEMPTS - 1, serialization_failure: 0 },
        gaveUp: { deadlock: 1, serialization_failure: 0 },
      });
    } finally {
      await pool.end();
    }
  });

  it("runs the whole transaction again when a conflict ends a nested one (a savepoint)", async () => {
    const { pool, db } = freshDatabase();
    try {
      let outer = 0;
      await db.transaction(async (tx) => {
        outer += 1;
        await tx.insert(schema.notes).values({ title: `outer ${outer}` });
        await tx.transaction(async (savepoint) => {
          if (outer === 1) throw serverError("40001", "could not serialize access due to concurrent update");
          await savepoint.insert(schema.notes).values({ title: `inner ${outer}` });
        });
      });
      expect(outer).toBe(2);
      expect((await db.select({ title: schema.notes.title }).from(schema.notes).orderBy(schema.notes.id)).map((row) => row.title)).toEqual(["outer 2", "inner 2"]);
    } finally {
      await pool.end();
    }
  });

  it("runs a transaction once when it fails for any other reason", async () => {
    const { pool, db } = freshDatabase();
    try {
      let runs = 0;
      const failure = db.transaction(async (tx) => {
        runs += 1;
        await tx.insert(schema.counters).values([{ name: "a" }, { name: "a" }]);
      });
      await expect(failure).rejects.toMatchObject({ cause: { code: "23505" } });
      expect(runs).toBe(1);
      expect(transactionRetryFigures(pool)).toEqual({ retried: { deadlock: 0, serialization_failure: 0 }, gaveUp: { deadlock: 0, serialization_failure: 0 } });
    } finally {
      await pool.end();
    }
  });
});

describe("retryDelayMs", () => {
  it("pauses anything from nothing up to 25 ms doubled per attempt, at most 400 ms", () => {
    const almostOne = () => 0.9999;
    expect([1, 2, 3, 4, 5, 6].map((attempt) => retryDelayMs(attempt, almostOne))).toEqual([24, 49, 99, 199, 399, 399]);
    expect(retryDelayMs(3, () => 0)).toBe(0);
  });
});

describe("transactionConflict", () => {
  it.each([
    ["40P01", "deadlock"],
    ["40001", "serialization_failure"],
    ["23505", null],
    ["08006", null],
  ])("names %s under drizzle's wrapper: %s", (code, expected) => {
    expect(transactionConflict(serverError(code, "message"))).toBe(expected);
  });

  it("is null for what is not an error of the server", () => {
    expect([undefined, null, "40P01", { code: 40001 }].map(transactionConflict)).toEqual([null, null, null, null]);
  });
});
