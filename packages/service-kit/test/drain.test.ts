import { Agent, request } from "node:http";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { drainAndClose } from "../src/drain.js";

/** One GET on `agent`'s kept-alive connections: the status and Connection header, or the error code. */
function get(agent: Agent, url: string): Promise<{ status: number; connection: string | undefined } | { error: string }> {
  return new Promise((resolve) => {
    const sent = request(url, { agent }, (response) => {
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
    });
    sent.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    sent.end();
  });
}

async function listening() {
  const app = Fastify();
  let release = () => {};
  const slowAnswered = new Promise<void>((resolve) => (release = resolve));
  app.get("/fast", async () => ({ ok: true }));
  app.get("/slow", async () => {
    await slowAnswered;
    return { ok: true };
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { app, url, release };
}

describe("drainAndClose", () => {
  it("finishes the request in flight, answers requests on kept-alive connections with Connection: close, and refuses new connections", async () => {
    const { app, url, release } = await listening();
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    // Two kept-alive connections: one idle, one busy with a slow request (begun before the drain, so answered as usual).
    await Promise.all([get(agent, `${url}/fast`), get(agent, `${url}/fast`)]);
    const slow = get(agent, `${url}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    let closed = false;
    const closing = drainAndClose(app, 10_000).then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));

    // The idle connection is still there: a request on it is answered, and the connection closes after it.
    expect(await get(agent, `${url}/fast`)).toEqual({ status: 200, connection: "close" });
    // A new connection is refused.
    expect(await get(new Agent({ keepAlive: false }), `${url}/fast`)).toEqual({ error: "ECONNREFUSED" });
    expect(closed).toBe(false);
    release();
    expect(await slow).toMatchObject({ status: 200 });
    // That connection too answers the next request on it, and closes.
    expect(await get(agent, `${url}/fast`)).toEqual({ status: 200, connection: "close" });
    await closing;
    agent.destroy();
  });

  it("closes connections left idle after the grace", async () => {
    const { app, url } = await listening();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await get(agent, `${url}/fast`);
    const began = Date.now();
    await drainAndClose(app, 200);
    expect(Date.now() - began).toBeGreaterThanOrEqual(190);
    expect(Date.now() - began).toBeLessThan(2000);
    agent.destroy();
  });

  it("closes at once when nothing is connected", async () => {
    const { app } = await listening();
    const began = Date.now();
    await drainAndClose(app, 5000);
    expect(Date.now() - began).toBeLessThan(1000);
  });
});
