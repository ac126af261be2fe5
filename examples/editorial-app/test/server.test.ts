import { afterAll, describe, expect, it } from "vitest";
import { startEditorialApp } from "../src/server.js";
import { editorialTestDatabase } from "./support/editorial-app.js";

const database = await editorialTestDatabase();
afterAll(() => database.close());

describe("startEditorialApp", () => {
  it("listens where the environment says and closes cleanly", async () => {
    const app = await startEditorialApp({
      EDITORIAL_APP_CLIENT_ID: "id",
      EDITORIAL_APP_CLIENT_SECRET: "secret",
      DATABASE_URL: database.url,
      PORT: "0",
      LOG_LEVEL: "silent",
    });
    const address = app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;

    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    const home = await fetch(`http://127.0.0.1:${port}/`, { redirect: "manual" });
    await app.close();

    expect(await health.json()).toEqual({ status: "ok" });
    expect(home.status).toBe(302);
    expect(home.headers.get("location")).toBe("/auth/gds?return_to=%2F");
  });
});
