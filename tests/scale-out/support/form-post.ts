import { request } from "node:http";

/** A response as far as these tests look at it. */
export interface FormResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * POSTs a form over plain HTTP, optionally from a chosen local address
 * (`127.0.0.2` is another client IP on the loopback interface, so it has
 * brute-force counters of its own).
 */
export function postForm(url: string, fields: Record<string, string>, options: { localAddress?: string } = {}): Promise<FormResponse> {
  const body = new URLSearchParams(fields).toString();
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) },
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}
