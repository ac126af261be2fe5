// The few HTTP requests npm start makes itself (readiness probes, the demo learners' import), through
// node:http: fetch would load its own HTTP client (undici), which costs this process time at every
// start and memory for as long as it runs.
import { request } from "node:http";
import { request as requestTls } from "node:https";

/**
 * Sends one request; resolves with the status and the body as text once the whole answer has come.
 * @param {string} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: string }} [options]
 * @returns {Promise<{ status: number, ok: boolean, text: string }>}
 */
export function httpRequest(url, options = {}) {
  const target = new URL(url);
  const send = target.protocol === "https:" ? requestTls : request;
  return new Promise((resolve, reject) => {
    const outgoing = send(target, { method: options.method ?? "GET", headers: options.headers ?? {} }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        resolve({ status, ok: status >= 200 && status < 300, text });
      });
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}
