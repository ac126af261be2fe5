// Sign-on serving HTTPS itself (SIGNON_TLS_CERT, SIGNON_TLS_KEY), started as server.ts starts it, with a certificate
// made by deploy/certificates/make-certificates.sh, and probed with Node's own TLS client: TLS 1.2 or later only,
// forward-secret AEAD ciphers only, and HSTS on its answers.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, createServer, type ConnectionOptions } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { signonHttpsOptions } from "../../src/https-options.js";
import { startSignon, type RunningSignon } from "../../src/server.js";
import { openTestDatabase } from "../support/signon.js";
import { certificateToolsMissing, makeCertificates } from "@tessera/db/testing";

const missing = certificateToolsMissing();
if (missing !== null && process.env["CI"] === "true") throw new Error(`${missing}; CI must run the HTTPS tests`);

const database = await openTestDatabase();
const folder = mkdtempSync(join(tmpdir(), "tessera-signon-https-"));
const certFile = join(folder, "signon.internal.crt");
const keyFile = join(folder, "signon.internal.key");
let ca: Buffer;
let running: RunningSignon;
let port: number;

beforeAll(async () => {
  if (missing !== null) return;
  makeCertificates(folder, ["signon.internal"]);
  ca = readFileSync(join(folder, "ca.crt"));
  running = await startSignon(
    {
      NODE_ENV: "production",
      SIGNON_HOST: "127.0.0.1",
      SIGNON_PORT: "0",
      SIGNON_PUBLIC_URL: "https://signon.internal",
      SIGNON_TLS_CERT: certFile,
      SIGNON_TLS_KEY: keyFile,
      SIGNON_SECRET_KEY: "5e".repeat(32),
      SIGNON_ARGON2_MEMORY_KIB: "64",
      SIGNON_ARGON2_TIME_COST: "1",
      DATABASE_URL: database.url,
    },
    { logger: false },
  );
  port = Number(new URL(running.url).port);
});

afterAll(async () => {
  await running?.close();
  await database.close();
  rmSync(folder, { recursive: true, force: true });
});

/** What a TLS handshake with `options` (on top of trusting the deployment's CA) agreed, or the error that ended it. */
function handshake(options: ConnectionOptions, to = port): Promise<{ protocol: string | null; cipher: string } | Error> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: to, servername: "localhost", ca, ...options }, () => {
      const agreed = { protocol: socket.getProtocol(), cipher: socket.getCipher().name };
      socket.end();
      resolve(agreed);
    });
    socket.once("error", (error) => resolve(error));
  });
}

describe.skipIf(missing !== null)("Sign-on's own HTTPS", () => {
  it("listens for HTTPS", () => {
    expect(running.url).toBe(`https://127.0.0.1:${port}`);
  });

  it("refuses a TLS 1.1 client", async () => {
    const outcome = await handshake({ minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT:@SECLEVEL=0" });
    expect(outcome).toBeInstanceOf(Error);
    // The server's alert, not the client's own refusal to offer TLS 1.1.
    expect((outcome as Error & { code?: string }).code).toBe("ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION");
  });

  it.each(["AES128-SHA", "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA256"])("refuses a TLS 1.2 client that offers only %s", async (cipher) => {
    const outcome = await handshake({ maxVersion: "TLSv1.2", ciphers: cipher });
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error & { code?: string }).code).toBe("ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE");
  });

  it("refuses CBC suites that Node.js's defaults would accept", async () => {
    // The same certificate behind Node.js's default settings: the refusals above are Sign-on's settings, not the client's.
    const lenient = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (socket) => socket.end());
    await new Promise<void>((resolve) => lenient.listen(0, "127.0.0.1", resolve));
    try {
      const to = (lenient.address() as AddressInfo).port;
      for (const cipher of ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA256"]) {
        expect(await handshake({ maxVersion: "TLSv1.2", ciphers: cipher }, to)).toEqual({ protocol: "TLSv1.2", cipher });
      }
    } finally {
      await new Promise((resolve) => lenient.close(resolve));
    }
  });

  it.each(["ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"])("accepts TLS 1.2 with %s", async (cipher) => {
    expect(await handshake({ minVersion: "TLSv1.2", maxVersion: "TLSv1.2", ciphers: cipher })).toEqual({ protocol: "TLSv1.2", cipher });
  });

  it("prefers its own order of TLS 1.2 suites to the client's", async () => {
    const outcome = await handshake({ maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256", honorCipherOrder: false });
    expect(outcome).toEqual({ protocol: "TLSv1.2", cipher: "ECDHE-ECDSA-AES128-GCM-SHA256" });
  });

  it("accepts TLS 1.3", async () => {
    expect(await handshake({ minVersion: "TLSv1.3" })).toEqual({ protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256" });
  });

  it("sends Strict-Transport-Security on its HTTPS answers", async () => {
    const answer = await new Promise<{ status: number | undefined; hsts: string | undefined }>((resolve, reject) => {
      const sent = request({ host: "127.0.0.1", port, servername: "localhost", ca, path: "/.well-known/oauth-authorization-server" }, (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode, hsts: response.headers["strict-transport-security"] }));
      });
      sent.on("error", reject);
      sent.end();
    });
    expect(answer).toEqual({ status: 200, hsts: "max-age=31536000; includeSubDomains" });
  });
});

describe.skipIf(missing !== null)("signonHttpsOptions", () => {
  it("names the variable and the file it cannot read", () => {
    expect(() => signonHttpsOptions({ certFile: join(folder, "absent.crt"), keyFile })).toThrow(new ConfigError("SIGNON_TLS_CERT", `cannot read ${join(folder, "absent.crt")} (no such file)`));
    expect(() => signonHttpsOptions({ certFile, keyFile: join(folder, "absent.key") })).toThrow(new ConfigError("SIGNON_TLS_KEY", `cannot read ${join(folder, "absent.key")} (no such file)`));
  });

  it("says so when the files are not a certificate and its key", () => {
    expect(() => signonHttpsOptions({ certFile: keyFile, keyFile: certFile })).toThrow(/^SIGNON_TLS_CERT: .* are not a PEM certificate and its private key/);
  });
});
