import { createPool } from "@tessera/db";
import { FaultProxy, useTestDatabase } from "@tessera/db/testing";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../src/errors.js";
import { PostgresSessionStore, PostgresUserStore, signonClientMigrations } from "../src/postgres/index.js";
import { Browser } from "./support/browser.js";
import { createUser, useHarness } from "./support/client-app.js";

// The PostgreSQL stores reach their database through a proxy that refuses connections, as while PostgreSQL restarts.
const database = await useTestDatabase({ migrations: [signonClientMigrations] });
const proxy = await FaultProxy.start(database.url);
const pool = createPool({ url: proxy.urlFor(database.url), max: 2, connectionTimeoutMs: 2000 });
afterAll(async () => {
  await pool.end();
  await proxy.close();
  await database.close();
});
beforeEach(async () => {
  await proxy.accept();
  await database.reset();
});

const h = useHarness({ users: new PostgresUserStore(pool), sessions: new PostgresSessionStore(pool) });

async function databaseDown(): Promise<void> {
  proxy.cutAll();
  await proxy.refuse();
}

const pushToken = (): string => h.signon.issueApiToken(h.signon.addUser(createUser({ permissions: ["user_update_permission"] })).uid);

describe("the PostgreSQL stores while their database is unreachable", () => {
  it("throw StoreUnavailableError carrying the driver's error", async () => {
    await databaseDown();
    const error = await h.users.findByUid("someone").catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it("make a signed-in page answer 503 with Retry-After (a page for browsers), and work again afterwards", async () => {
    const user = h.signon.addUser(createUser());
    const browser = new Browser(h.app);
    await browser.signIn(h.signon, user.uid);
    await databaseDown();
    const down = await h.app.inject({ method: "GET", url: "/", headers: { accept: "text/html", cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } });
    expect(down.statusCode).toBe(503);
    expect(down.headers["retry-after"]).toBe("5");
    expect(down.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(down.body).toContain("Temporarily unavailable");
    const json = await h.app.inject({ method: "GET", url: "/", headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } });
    expect(json.statusCode).toBe(503);
    expect(json.json()).toEqual({ error: "temporarily_unavailable", error_description: "This application cannot reach its session store right now; try again shortly." });
    await proxy.accept();
    expect((await browser.get("/")).statusCode).toBe(200);
  });

  it("make starting a sign-in answer 503, not 500", async () => {
    await databaseDown();
    const response = await h.app.inject({ method: "GET", url: "/auth/gds", headers: { accept: "text/html" } });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
  });

  it("make a push receiver answer 503 temporarily_unavailable, which Sign-on retries", async () => {
    const token = pushToken();
    const user = createUser({ permissions: ["admin"] });
    await databaseDown();
    const response = await h.app.inject({ method: "PUT", url: `/auth/gds/api/users/${user.uid}`, headers: { authorization: `Bearer ${token}` }, payload: { user } });
    expect(response.statusCode).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.json()).toEqual({ error: "temporarily_unavailable", error_description: "The update could not be stored now; try again shortly." });
  });
});
