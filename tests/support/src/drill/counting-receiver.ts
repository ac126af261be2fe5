import { createServer, type Server } from "node:http";

/** One request as the receiver saw it. */
export interface Receipt {
  method: string;
  path: string;
  authorization: string | undefined;
}

/**
 * A push receiver on a real local port: answers every request `200 {}` and
 * counts each `METHOD path` it gets, so duplicates and losses both show.
 */
export class CountingReceiver {
  readonly receipts: Receipt[] = [];
  readonly counts = new Map<string, number>();
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        const receipt = { method: request.method ?? "", path: request.url ?? "", authorization: request.headers.authorization };
        this.receipts.push(receipt);
        const key = `${receipt.method} ${receipt.path}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    this.server = server;
    this.url = `http://127.0.0.1:${address.port}`;
  }

  /** The receipts whose path starts with `prefix`. */
  under(prefix: string): Receipt[] {
    return this.receipts.filter((receipt) => receipt.path.startsWith(prefix));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
