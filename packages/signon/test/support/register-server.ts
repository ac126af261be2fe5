import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** How the register server answers one path (with its query): JSON, raw text, or never. */
export type RegisterAnswer =
  | { json: unknown; status?: number; delayMs?: number }
  | { text: string; status?: number; headers?: Record<string, string> }
  /** Sends the status line and headers, then never the end of the body. */
  | { stall: "body" }
  /** Never answers at all. */
  | { stall: "headers" };

/**
 * An organisation register on a real port: answers each path (query
 * included) as `answers` says, 404 for any other, and records every request
 * it gets, in order.
 */
export class RegisterServer {
  readonly requests: string[] = [];
  readonly answers = new Map<string, RegisterAnswer>();
  private readonly stalled = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<RegisterServer> {
    const handlers: { answer?: (request: IncomingMessage, response: ServerResponse) => void } = {};
    const server = createServer((request, response) => handlers.answer?.(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const register = new RegisterServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    handlers.answer = (request, response) => register.answer(request, response);
    return register;
  }

  /** Serves `pages` (path → answer) from now on, in place of the earlier ones, and forgets the requests so far. */
  serve(pages: Record<string, RegisterAnswer>): void {
    this.answers.clear();
    this.requests.length = 0;
    for (const [path, answer] of Object.entries(pages)) this.answers.set(path, answer);
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    const path = request.url ?? "/";
    this.requests.push(path);
    const answer = this.answers.get(path);
    if (answer === undefined) {
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    if ("stall" in answer) {
      this.stalled.add(response);
      if (answer.stall === "body") {
        response.writeHead(200, { "content-type": "application/json" });
        response.write('{"results": [');
      }
      return;
    }
    if ("text" in answer) {
      response.writeHead(answer.status ?? 200, { "content-type": "application/json", ...answer.headers }).end(answer.text);
      return;
    }
    const send = () => response.writeHead(answer.status ?? 200, { "content-type": "application/json" }).end(JSON.stringify(answer.json));
    if (answer.delayMs === undefined) send();
    else setTimeout(send, answer.delayMs);
  }

  async close(): Promise<void> {
    for (const response of this.stalled) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
