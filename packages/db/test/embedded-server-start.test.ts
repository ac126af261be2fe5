import { createServer } from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startEmbeddedServer } from "../src/index.js";

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
});
