import { createServer } from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startEmbeddedServer } from "../src/index.js";

function warningsLogger(): { warnings: string[]; info(message: string): void; warn(message: string): void } {
  const warnings: string[] = [];
  return { warnings, info: () => {}, warn: (message) => warnings.push(message) };
}

describe("startEmbeddedServer start and stop", () => {
  it("fails with the reason when it cannot listen", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    try {
      await expect(startEmbeddedServer({ port })).rejects.toThrow(/the embedded database could not start: .*EADDRINUSE/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("refuses new connections once closed, and closing twice is one close", async () => {
    const server = await startEmbeddedServer();
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    client.on("error", () => {});
    await Promise.all([server.close(), server.close()]);
    await expect(client.query("SELECT 1")).rejects.toThrow();
    const late = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 2000 });
    await expect(late.connect()).rejects.toThrow();
  });

  it("warns through the logger when an idle transaction keeps other connections waiting", async () => {
    const log = warningsLogger();
    const server = await startEmbeddedServer({ log, stallWarningMs: 50 });
    const holder = new pg.Client({ connectionString: server.url });
    const waiter = new pg.Client({ connectionString: server.url });
    try {
      await holder.connect();
      await waiter.connect();
      await holder.query("BEGIN");
      const waiting = waiter.query<{ one: number }>("SELECT 1 AS one");
      await expect.poll(() => log.warnings.length, { timeout: 20_000 }).toBeGreaterThan(0);
      expect(log.warnings[0]).toMatch(/^embedded database: connection \d+ has held the embedded database's only session/);
      await holder.query("COMMIT");
      expect((await waiting).rows).toEqual([{ one: 1 }]);
    } finally {
      await holder.end();
      await waiter.end();
      await server.close();
    }
  });
});
