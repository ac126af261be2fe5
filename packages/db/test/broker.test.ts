import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leaseFromBroker, startTestDatabaseBroker, type TestDatabaseBroker } from "../src/testing/broker.js";

let broker: TestDatabaseBroker;

beforeAll(async () => {
  broker = await startTestDatabaseBroker();
});

afterAll(async () => {
  await broker.close();
});

describe("test database broker", () => {
  it("gives a slot the same server every time and another slot its own", async () => {
    const [first, again] = await Promise.all([leaseFromBroker(broker.url, "1"), leaseFromBroker(broker.url, "1")]);
    const other = await leaseFromBroker(broker.url, "2");
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    const client = new pg.Client({ connectionString: other });
    await client.connect();
    expect((await client.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await client.end();
  });

  it("answers 404 to anything but a slot", async () => {
    expect((await fetch(`${broker.url}/servers/`)).status).toBe(404);
    expect((await fetch(`${broker.url}/other`)).status).toBe(404);
  });
});
