/** One request a fake receiver got. */
export interface ReceivedPush {
  method: string;
  url: string;
  authorization: string | null;
  body: unknown;
}

/**
 * Push receivers behind an injected `fetch`: records every request, answers
 * `status` (200 by default), or fails to connect while `down`.
 */
export class FakeReceivers {
  readonly received: ReceivedPush[] = [];
  down = false;
  status = 200;
  /** Runs while a request is being answered (to change state mid-delivery). */
  onRequest: ((push: ReceivedPush) => Promise<void>) | undefined;

  readonly fetch: typeof fetch = async (input, init) => {
    if (this.down) {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) });
    }
    const headers = new Headers(init?.headers);
    const push: ReceivedPush = {
      method: init?.method ?? "GET",
      url: typeof input === "string" ? input : input instanceof URL ? input.href : input.url,
      authorization: headers.get("authorization"),
      body: typeof init?.body === "string" ? (JSON.parse(init.body) as unknown) : null,
    };
    this.received.push(push);
    await this.onRequest?.(push);
    return new Response(this.status < 300 ? "{}" : JSON.stringify({ error: "refused" }), { status: this.status });
  };

  /** What was received, without the authorization header. */
  summary(): { method: string; url: string; body: unknown }[] {
    return this.received.map(({ method, url, body }) => ({ method, url, body }));
  }
}
