// Worker thread of the embedded database server: opens PGlite on a data
// directory (or in memory) and serves the PostgreSQL wire protocol on
// 127.0.0.1 through pglite-socket's connection handler. See
// embedded-server.ts for the side that starts and stops it.
import { createServer } from "node:net";
import { inspect } from "node:util";
import { parentPort, workerData } from "node:worker_threads";
import { PGLiteSocketHandler } from "@electric-sql/pglite-socket";
import { openPGlite } from "./cluster-template.mjs";
import { SessionArbiter } from "./session-arbiter.mjs";

/** @type {{ dataDir: string, host: string, port: number, stallWarningMs: number | undefined }} */
const options = workerData;
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);

/** @param {unknown} error */
function describe(error) {
  return error instanceof Error ? (error.stack ?? error.message) : inspect(error);
}

async function serve() {
  const db = await openPGlite(options.dataDir);
  const arbiter = new SessionArbiter(db, {
    stallWarningMs: options.stallWarningMs,
    onStall: (message) => port.postMessage({ type: "warning", error: message }),
  });
  /** @type {Set<PGLiteSocketHandler>} */
  const handlers = new Set();
  let accepting = true;

  const server = createServer((socket) => {
    if (!accepting) {
      socket.destroy();
      return;
    }
    socket.on("error", () => {});
    // The arbiter implements the queue interface the handler calls.
    const handler = new PGLiteSocketHandler({ queryQueue: /** @type {any} */ (arbiter), closeOnDetach: true });
    handlers.add(handler);
    const forget = () => handlers.delete(handler);
    handler.addEventListener("close", forget);
    handler.addEventListener("error", forget);
    handler.attach(socket).catch(() => {
      forget();
      socket.destroy();
    });
  });

  try {
    await new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.host, () => resolve(undefined));
    });
  } catch (error) {
    await db.close();
    throw error;
  }
  const address = server.address();
  if (address === null || typeof address !== "object") throw new Error("the server has no TCP address");

  async function close() {
    accepting = false;
    const closed = new Promise((resolve) => server.close(() => resolve(undefined)));
    // A connection that fails to detach must not keep PGlite from closing.
    await Promise.allSettled([...handlers].map((handler) => handler.detach(true)));
    handlers.clear();
    await closed;
    await arbiter.idle();
    await db.close();
  }

  port.on("message", (message) => {
    if (message?.type !== "close") return;
    close().then(
      () => port.postMessage({ type: "closed" }),
      (error) => port.postMessage({ type: "close-failed", error: describe(error) }),
    );
  });
  port.postMessage({ type: "ready", port: address.port });
}

// pglite-socket detaches failed connections without awaiting the result; report
// such failures to the main thread instead of letting them end the worker.
process.on("unhandledRejection", (error) => {
  port.postMessage({ type: "warning", error: describe(error) });
});

serve().catch((error) => {
  port.postMessage({ type: "failed", error: describe(error) });
});
