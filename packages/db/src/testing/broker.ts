import { createServer, type Server } from "node:http";
import { startEmbeddedServer, type EmbeddedServer } from "../embedded/embedded-server.js";
import { testLogger } from "./test-logger.js";

/** Hands each vitest worker slot its own in-memory embedded server, started on first use. */
export interface TestDatabaseBroker {
  /** Base URL of the broker's HTTP endpoint on 127.0.0.1. */
  readonly url: string;
  /** Stops the broker and every server it started. */
  close(): Promise<void>;
}

/**
 * Starts the broker that {@link useTestDatabase} asks for a server through
 * `GET <url>/servers/<slot>` (answer: `{ "url": "postgres://…" }`). A slot is a
 * vitest pool id: one test file runs in a slot at a time, so a slot's server is
 * never shared by files running in parallel, and it boots once per run.
 * `prewarm` starts slot 1's server at once.
 */
export async function startTestDatabaseBroker(options: { prewarm?: boolean } = {}): Promise<TestDatabaseBroker> {
  const servers = new Map<string, Promise<EmbeddedServer>>();
  // The first start may have to initialise the cluster template; the others
  // wait for it and load the template instead of all running initdb at once.
  let firstStart: Promise<unknown> | undefined;

  const serverFor = (slot: string): Promise<EmbeddedServer> => {
    let server = servers.get(slot);
    if (server === undefined) {
      const start = (): Promise<EmbeddedServer> => startEmbeddedServer({ log: testLogger });
      server = firstStart === undefined ? start() : firstStart.then(start, start);
      firstStart ??= server;
      servers.set(slot, server);
      // A failed start is not remembered: the next request tries again.
      server.catch(() => servers.delete(slot));
    }
    return server;
  };

  const http: Server = createServer((request, response) => {
    const slot = /^\/servers\/([\w-]{1,40})$/.exec(request.url ?? "")?.[1];
    if (request.method !== "GET" || slot === undefined) {
      response.writeHead(404).end();
      return;
    }
    serverFor(slot).then(
      (server) => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ url: server.url })),
      (error: unknown) =>
        response.writeHead(500, { "content-type": "text/plain" }).end(error instanceof Error ? error.message : String(error)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", resolve);
  });
  const address = http.address();
  if (address === null || typeof address !== "object") throw new Error("the broker has no TCP address");

  // Slot 1 is always the first one used: start its server now, while vitest starts its workers.
  if (options.prewarm === true) void serverFor("1").catch(() => {});

  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      const started = await Promise.allSettled(servers.values());
      servers.clear();
      await Promise.all(started.flatMap((result) => (result.status === "fulfilled" ? [result.value.close()] : [])));
    },
  };
}

/** Asks a broker for the server of a slot. */
export async function leaseFromBroker(brokerUrl: string, slot: string): Promise<string> {
  const response = await fetch(`${brokerUrl}/servers/${encodeURIComponent(slot)}`);
  if (!response.ok) throw new Error(`the test database broker answered ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { url?: unknown };
  if (typeof body.url !== "string") throw new Error("the test database broker answered without a url");
  return body.url;
}
