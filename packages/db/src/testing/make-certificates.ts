import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The deployment's own script (deploy/certificates), as an operator runs it. */
const script = fileURLToPath(new URL("../../../../deploy/certificates/make-certificates.sh", import.meta.url));

/**
 * Runs deploy/certificates/make-certificates.sh: the authority (made once in `folder`, kept for later runs) and a
 * certificate for each of `names`, each also naming `extraNames` (EXTRA_NAMES: DNS names or IP:addresses).
 */
export function makeCertificates(folder: string, names: string[], extraNames = "localhost"): void {
  execFileSync("sh", [script, folder, ...names], { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", EXTRA_NAMES: extraNames }, stdio: "ignore" });
}

/** What makeCertificates needs that this machine lacks (openssl), or `null` when it has it. */
export function certificateToolsMissing(): string | null {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return null;
  } catch {
    return "openssl is not installed (make-certificates.sh needs it)";
  }
}
