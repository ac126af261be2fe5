import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startEmbeddedServer, type EmbeddedServer } from "../src/index.js";

let server: EmbeddedServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startEmbeddedServer();
  pool = new pg.Pool({ connectionString: server.url, max: 6 });
  await pool.query("CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)");
});

afterAll(async () => {
  await pool.end();
  await server.close();
});

beforeEach(async () => {
  await pool.query("TRUNCATE accounts");
  await pool.query("INSERT INTO accounts VALUES (1, 100), (2, 100)");
});

async function inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

async function balances(): Promise<Record<number, number>> {
  const { rows } = await pool.query<{ id: number; balance: number }>("SELECT id, balance FROM accounts ORDER BY id");
  return Object.fromEntries(rows.map((row) => [row.id, row.balance]));
}

describe("startEmbeddedServer", () => {
  it("serves a connection string on 127.0.0.1 that pg connects to", async () => {
    expect(server.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const { rows } = await pool.query<{ answer: number }>("SELECT $1::int + 1 AS answer", [41]);
    expect(rows).toEqual([{ answer: 42 }]);
  });

  it("keeps concurrent transactions apart: none sees another's uncommitted rows", async () => {
    const seen = await Promise.all(
      [1, 2, 1, 2].map((id, round) =>
        inTransaction(async (client) => {
          await client.query("UPDATE accounts SET balance = balance + $1 WHERE id = $2", [round + 1, id]);
          // Let the other transactions try to run in between.
          await new Promise((resolve) => setImmediate(resolve));
          const { rows } = await client.query<{ total: number }>("SELECT sum(balance)::int AS total FROM accounts");
          return rows[0]?.total;
        }),
      ),
    );
    // Each transaction sees the committed total plus its own change, never a neighbour's uncommitted one.
    expect(seen).toEqual([201, 203, 206, 210]);
    expect(await balances()).toEqual({ 1: 104, 2: 106 });
  });

  it("answers many parameterised queries from several connections without mixing them up", async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => pool.query<{ i: number; text: string }>("SELECT $1::int AS i, $2::text AS text", [i, `n${i}`])),
    );
    expect(answers.map((answer) => answer.rows[0])).toEqual(Array.from({ length: 60 }, (_, i) => ({ i, text: `n${i}` })));
  });

  it("rolls back a failed transaction and keeps serving the other connections", async () => {
    const failing = inTransaction(async (client) => {
      await client.query("UPDATE accounts SET balance = 0 WHERE id = 1");
      await client.query("SELECT 1 / 0");
    });
    const meanwhile = pool.query<{ n: number }>("SELECT count(*)::int AS n FROM accounts");
    await expect(failing).rejects.toThrow("division by zero");
    expect((await meanwhile).rows).toEqual([{ n: 2 }]);
    expect(await balances()).toEqual({ 1: 100, 2: 100 });
  });

  it("recovers from an error in the middle of an extended-protocol exchange", async () => {
    const results = await Promise.allSettled([
      pool.query("SELECT $1::int AS i", ["not a number"]),
      pool.query<{ i: number }>("SELECT $1::int AS i", [7]),
    ]);
    expect(results[0]?.status).toBe("rejected");
    expect(results[1]).toEqual({ status: "fulfilled", value: expect.objectContaining({ rows: [{ i: 7 }] }) });
  });

  it("rolls back the open transaction of a client that disconnects", async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query("BEGIN");
    await client.query("UPDATE accounts SET balance = 0");
    const waiting = balances();
    await client.end();
    expect(await waiting).toEqual({ 1: 100, 2: 100 });
  });

  it("rolls back the open transaction of a client whose socket is cut", async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    client.on("error", () => {});
    await client.query("BEGIN");
    await client.query("UPDATE accounts SET balance = 0");
    const waiting = balances();
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect(await waiting).toEqual({ 1: 100, 2: 100 });
  });

  it("rolls back a transaction that a client began just before its socket was cut", async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    client.on("error", () => {});
    const began = client.query("BEGIN").catch(() => "cut");
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await began;
    expect(await balances()).toEqual({ 1: 100, 2: 100 });
    await inTransaction((other) => other.query("UPDATE accounts SET balance = 50 WHERE id = 1"));
    expect(await balances()).toEqual({ 1: 50, 2: 100 });
  });
});
