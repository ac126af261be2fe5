import { createServer, type Server } from "node:http";

/** One request a receiver got, in arrival order. */
export interface ReceivedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

/**
 * A push receiver on a real port that can be taken down and brought back up
 * on the same port: records every request and answers `200 {}`.
 */
export class HttpReceiver {
  readonly received: ReceivedRequest[] = [];
  private server: Server | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        this.received.push({
          method: request.method ?? "",
          path: request.url ?? "",
          authorization: request.headers.authorization,
          body: text === "" ? null : (JSON.parse(text) as unknown),
        });
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", resolve);
    });
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
