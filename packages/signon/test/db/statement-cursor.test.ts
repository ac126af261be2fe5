import { afterAll, describe, expect, it } from "vitest";
import { statementRunner } from "../../src/db/statements.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
afterAll(() => database.close());

const numbers = (upTo: number) => ({ text: "select n, 10 / (n - $1::int) as tenth from generate_series(1, $2::int) as n", values: [0, upTo] });

async function poolStillServes(): Promise<void> {
  const { rows } = await database.pool.query<{ one: number }>("select 1 as one");
  expect(rows[0]?.one).toBe(1);
}

describe("a statement's rows through a cursor (users.csv reads this way)", () => {
  it("gives every row once, in order, in batches of the size asked for", async () => {
    const batches: unknown[][][] = [];
    for await (const batch of statementRunner(database.pool, false).cursor(numbers(1050), 100)) batches.push(batch);
    expect(batches.map((batch) => batch.length)).toEqual([...Array<number>(10).fill(100), 50]);
    expect(batches.flat().map((row) => row[0])).toEqual(Array.from({ length: 1050 }, (_, index) => index + 1));
  });

  it("gives the connection back when the reader stops after the first batch, with the next one already asked for", async () => {
    const before = database.pool.totalCount;
    for await (const batch of statementRunner(database.pool, false).cursor(numbers(1000), 100)) {
      expect(batch).toHaveLength(100);
      break;
    }
    expect(database.pool.waitingCount).toBe(0);
    expect(database.pool.idleCount).toBe(database.pool.totalCount);
    expect(database.pool.totalCount).toBeGreaterThanOrEqual(before);
    await poolStillServes();
  });

  it("fails the reader when a later batch fails, after giving the earlier ones, and the pool goes on", async () => {
    const seen: number[] = [];
    const failing = { text: numbers(0).text, values: [250, 1000] };
    await expect(
      (async () => {
        for await (const batch of statementRunner(database.pool, false).cursor(failing, 100)) seen.push(...batch.map((row) => row[0] as number));
      })(),
    ).rejects.toThrow(/division by zero/);
    expect(seen).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
    await poolStillServes();
  });
});
