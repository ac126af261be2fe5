import { createServer, type Socket } from "node:net";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { settleBackgroundWork } from "../../src/background-work.js";
import { InjectBrowser } from "../support/browser.js";
import { createUser } from "../support/factories.js";
import { buildTestSignon, openTestDatabase, testConfig } from "../support/signon.js";

// A mail server that accepts connections and never says a word: a send to it waits until the connection ends.
const connections: Socket[] = [];
const closed = new Set<Socket>();
let connected: () => void = () => undefined;
const mailServer = createServer((socket) => {
  connections.push(socket);
  socket.on("close", () => closed.add(socket));
  socket.on("error", () => undefined);
  connected();
});
await new Promise<void>((resolve) => mailServer.listen(0, "127.0.0.1", resolve));
const address = mailServer.address();
if (address === null || typeof address === "string") throw new Error("the mail server has no port");

const lines: string[] = [];
const logText = () => lines.join("");
const database = await openTestDatabase();
const { app, ctx } = await buildTestSignon(database, testConfig({ SIGNON_SMTP_URL: `smtp://127.0.0.1:${address.port}` }), { level: "info", stream: { write: (line: string) => void lines.push(line) } });
afterAll(async () => {
  for (const socket of connections) socket.destroy();
  await new Promise<void>((resolve) => mailServer.close(() => resolve()));
  await app.close();
  await database.close();
});
beforeEach(() => database.reset());

/** Resolves once the mail server has had `count` connections. */
function connectionCount(count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (connections.length >= count) resolve();
    };
    connected = check;
    check();
  });
}

/** Resolves once a log line contains `text`. */
async function logged(text: string): Promise<void> {
  while (!logText().includes(text)) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("POST /password-reset when the mail server does not answer", () => {
  it("answers without waiting for the mail, as for an unknown address; the failed send is logged once the connection ends", async () => {
    const person = await createUser(ctx);
    const known = await new InjectBrowser(app).submit("/password-reset", "/password-reset", { email: person.email });
    expect(known.statusCode).toBe(303);
    const unknown = await new InjectBrowser(app).submit("/password-reset", "/password-reset", { email: "nobody@example.org" });
    expect({ status: unknown.statusCode, location: unknown.headers.location, body: unknown.body }).toEqual({ status: known.statusCode, location: known.headers.location, body: known.body });

    // The mail was on its way to the silent server, which still holds the connection: the answer did not wait for it.
    await connectionCount(1);
    expect(connections).toHaveLength(1);
    const [socket] = connections;
    expect(socket !== undefined && !closed.has(socket)).toBe(true);

    lines.length = 0;
    socket?.destroy();
    await logged("password reset mail could not be sent");
    expect(logText()).not.toContain(person.email);
    expect(logText()).not.toMatch(/[0-9a-f]{64}/);
  });

  it("lets a stopping server wait for the mail on its way, up to a limit", async () => {
    const person = await createUser(ctx);
    const before = connections.length;
    await new InjectBrowser(app).submit("/password-reset", "/password-reset", { email: person.email });
    await connectionCount(before + 1);

    // The silent server holds the mail: a short wait gives up and says one is still on its way.
    expect(await settleBackgroundWork(50)).toBe(1);

    lines.length = 0;
    const settled = settleBackgroundWork(10_000);
    connections[before]?.destroy();
    expect(await settled).toBe(0);
    expect(logText()).toContain("password reset mail could not be sent");
  });
});
