import { FaultProxy } from "@tessera/db/testing";
import Fastify from "fastify";
import { afterAll, expect, it } from "vitest";
import editorialApp from "../src/app.js";
import { editorialTestDatabase } from "./support/editorial-app.js";

// The session sweep every 100 ms, against a database that goes away twice: one line when each outage starts, one when it ends.
const database = await editorialTestDatabase();
const proxy = await FaultProxy.start(database.url);
const lines: string[] = [];
const app = Fastify({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } });
await app.register(editorialApp, {
  config: {
    signonUrl: "http://127.0.0.1:9",
    clientId: "editorial",
    clientSecret: "secret",
    redirectUri: "http://127.0.0.1:3002/auth/gds/callback",
    database: { url: proxy.urlFor(database.url), dataDir: "unused" },
    sessionSweepMs: 100,
  },
});
await app.ready();
afterAll(async () => {
  await app.close();
  await proxy.close();
  await database.close();
});

const sweepLines = (what: string) => lines.filter((line) => line.includes(`session sweep: database ${what}`));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(condition: () => boolean): Promise<void> {
  for (let n = 0; n < 300 && !condition(); n++) await pause(50);
  expect(condition()).toBe(true);
}

it("logs a database outage once, not once per sweep, and when it is over", async () => {
  for (const outage of [1, 2]) {
    proxy.cutAll();
    await proxy.refuse();
    await until(() => sweepLines("unavailable").length === outage);
    // Several sweeps fail meanwhile (every 100 ms); none adds a line.
    await pause(1000);
    expect(sweepLines("unavailable")).toHaveLength(outage);
    await proxy.accept();
    await until(() => sweepLines("available again").length === outage);
  }
  expect(sweepLines("unavailable")[0]).toMatch(/session sweep: database unavailable \(.+\); retrying until it answers/);
  expect(lines.filter((line) => line.includes("could not remove expired sessions"))).toEqual([]);
});
