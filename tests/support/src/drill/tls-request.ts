// HTTPS requests with a client certificate (Patroni's REST API and etcd let in no one without one), answered as
// `fetch` answers: Node's own fetch takes no client certificate.
import { request } from "node:https";
import type { TlsIdentity } from "./certificates.js";

export interface TlsRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Gives up after this long (5 s by default). */
  timeoutMs?: number;
}

/** Sends one request to `url` presenting `identity`; resolves with the answer, rejects when there is none. */
export function tlsRequest(url: string, identity: Partial<TlsIdentity>, init: TlsRequestInit = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: init.method ?? "GET", headers: init.headers ?? {}, ...identity, timeout: init.timeoutMs ?? 5000, agent: false },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("error", reject);
        answer.on("end", () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(answer.headers)) if (typeof value === "string") headers.set(name, value);
          resolve(new Response(answer.statusCode === 204 ? null : Buffer.concat(chunks), { status: answer.statusCode ?? 0, headers }));
        });
      },
    );
    sent.on("timeout", () => sent.destroy(new Error(`no answer from ${url} in ${init.timeoutMs ?? 5000} ms`)));
    sent.on("error", reject);
    sent.end(init.body);
  });
}
