import { readFileSync } from "node:fs";
import { createSecureContext, type SecureContextOptions } from "node:tls";
import { ConfigError, type SignonConfig } from "./config.js";

/**
 * TLS 1.2's cipher suites: Mozilla's "intermediate" profile without its DHE
 * suites: ECDHE key exchange (forward secret) with AES-GCM or
 * ChaCha20-Poly1305 (AEAD), ECDSA certificates first (make-certificates.sh
 * makes P-256 keys), then RSA ones. No CBC, no SHA-1, no static RSA.
 *
 * @see https://wiki.mozilla.org/Security/Server_Side_TLS#Intermediate_compatibility_.28recommended.29
 */
export const TLS12_CIPHERS: readonly string[] = [
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
];

/**
 * TLS 1.3's suites, as Node.js enables them by default (every one forward
 * secret and AEAD). Named because a cipher list with none of them makes
 * Node.js turn TLS 1.3 off.
 */
export const TLS13_CIPHERS: readonly string[] = ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"];

/** The TLS settings of Sign-on's own HTTPS (and of its port while it starts). */
export type SignonHttpsOptions = SecureContextOptions & { cert: Buffer; key: Buffer; honorCipherOrder: true };

/**
 * The options of Sign-on's HTTPS server for `SIGNON_TLS_CERT` and
 * `SIGNON_TLS_KEY`: TLS 1.2 or later, the ciphers of {@link TLS12_CIPHERS}
 * and {@link TLS13_CIPHERS} in that order of preference, the server's order
 * winning. HSTS is sent by the security headers (S16).
 *
 * @throws ConfigError naming the variable when a file cannot be read, or the
 *   two do not make a certificate and its key.
 */
export function signonHttpsOptions(tls: NonNullable<SignonConfig["tls"]>): SignonHttpsOptions {
  const options: SignonHttpsOptions = {
    cert: readPem("SIGNON_TLS_CERT", tls.certFile),
    key: readPem("SIGNON_TLS_KEY", tls.keyFile),
    minVersion: "TLSv1.2",
    ciphers: [...TLS13_CIPHERS, ...TLS12_CIPHERS].join(":"),
    honorCipherOrder: true,
  };
  try {
    createSecureContext(options);
  } catch (error) {
    throw new ConfigError("SIGNON_TLS_CERT", `${tls.certFile} and SIGNON_TLS_KEY's ${tls.keyFile} are not a PEM certificate and its private key (${(error as Error).message})`);
  }
  return options;
}

function readPem(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied to this process's user" : String(code ?? error);
    throw new ConfigError(variable, `cannot read ${file} (${why})`);
  }
}
