import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, makeCertificates } from "@tessera/db/testing";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { answerWhileStarting } from "../src/starting-port.js";
import { TESSERA_VERSION } from "../src/version.js";

describe("answerWhileStarting", () => {
  it("answers live 200 and everything else 503 with Retry-After until released, then the service listens on the port", async () => {
    const port = await freePort();
    const starting = await answerWhileStarting("127.0.0.1", port);
    const origin = `http://127.0.0.1:${port}`;

    const live = await fetch(`${origin}/healthcheck/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok", version: TESSERA_VERSION });
    const ready = await fetch(`${origin}/healthcheck/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).toBe("5");
    expect(await ready.json()).toEqual({ status: "starting", version: TESSERA_VERSION });
    const other = await fetch(`${origin}/token?x=1`, { method: "POST", body: "grant_type=x" });
    expect(other.status).toBe(503);
    expect(await other.json()).toMatchObject({ error: "starting" });

    await starting.release();
    const app = Fastify();
    app.get("/healthcheck/ready", async () => ({ status: "ok" }));
    await app.listen({ host: "127.0.0.1", port });
    try {
      expect((await fetch(`${origin}/healthcheck/ready`)).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("leaves a port it cannot take, and port 0, to the service's own listen", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    try {
      await (await answerWhileStarting("127.0.0.1", address.port)).release();
      await (await answerWhileStarting("127.0.0.1", 0)).release();
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("answers over HTTPS when given the service's TLS settings, so that a probe over HTTPS finds it live", async () => {
    const folder = mkdtempSync(join(tmpdir(), "tessera-starting-port-"));
    try {
      try {
        makeCertificates(folder, ["signon.internal"]);
      } catch (error) {
        // Without openssl there is no certificate to serve; CI has it.
        if (process.env["CI"] === "true") throw error;
        return;
      }
      const port = await freePort();
      const starting = await answerWhileStarting("127.0.0.1", port, {
        cert: readFileSync(join(folder, "signon.internal.crt")),
        key: readFileSync(join(folder, "signon.internal.key")),
        minVersion: "TLSv1.2",
      });
      try {
        const live = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
          const sent = request({ host: "127.0.0.1", port, servername: "localhost", ca: readFileSync(join(folder, "ca.crt")), path: "/healthcheck/live" }, (response) => {
            let body = "";
            response.on("data", (chunk: Buffer) => (body += chunk.toString()));
            response.on("end", () => resolve({ status: response.statusCode, body }));
          });
          sent.on("error", reject);
          sent.end();
        });
        expect(live).toEqual({ status: 200, body: JSON.stringify({ status: "ok", version: TESSERA_VERSION }) });
      } finally {
        await starting.release();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
