// The deployment's certificates for the test cluster, made as docs/deployment.md makes them
// (deploy/certificates/make-certificates.sh): one authority, and a certificate for each machine of the cluster
// (the database nodes, the etcd members, HAProxy and the backup repository). Every machine here is 127.0.0.1, so
// each certificate names `localhost` and `127.0.0.1` besides the machine's own name.
import { makeCertificates } from "@tessera/db/testing";
import { execFileSync } from "node:child_process";
import { chownSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunAs } from "./processes.js";


/** What a client or server presents: the authority to trust, and its own certificate and key (PEM). */
export interface TlsIdentity {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export interface DeploymentCertificates {
  folder: string;
  /** The authority's certificate file. */
  ca: string;
  certFile(name: string): string;
  keyFile(name: string): string;
  /** The certificate and key in one file (HAProxy's `crt`). */
  pemFile(name: string): string;
  /** `name`'s identity, read from the files. */
  identity(name: string): TlsIdentity;
  /** Makes `names`' certificates again (make-certificates.sh), signed by the authority as it is now. */
  renew(names: string[]): void;
  /** A step of deploy/certificates/rotate-authority.sh: `begin` makes a new authority, trusted beside the old; `finish` drops the old. */
  rotateAuthority(step: "begin" | "finish"): void;
}

const rotateAuthorityScript = fileURLToPath(new URL("../../../../deploy/certificates/rotate-authority.sh", import.meta.url));

/** Runs make-certificates.sh for `names` into `folder` (the authority made once, kept for later runs). */
export function runMakeCertificates(folder: string, names: string[], extraNames = "localhost IP:127.0.0.1"): void {
  makeCertificates(folder, names, extraNames);
}

/** Makes the authority and each machine's certificate under `directory`/tls, readable by `runAs` (PostgreSQL's user). */
export function makeDeploymentCertificates(directory: string, names: string[], runAs: RunAs | undefined): DeploymentCertificates {
  const folder = join(directory, "tls");
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // The machines' programs run as `runAs` and read the files from here.
  const handOver = () => {
    if (!runAs) return;
    chownSync(folder, runAs.uid, runAs.gid);
    for (const file of readdirSync(folder)) chownSync(join(folder, file), runAs.uid, runAs.gid);
  };
  runMakeCertificates(folder, names);
  handOver();
  return {
    folder,
    ca: join(folder, "ca.crt"),
    certFile: (name) => join(folder, `${name}.crt`),
    keyFile: (name) => join(folder, `${name}.key`),
    pemFile: (name) => join(folder, `${name}.pem`),
    identity: (name) => ({ ca: readFileSync(join(folder, "ca.crt")), cert: readFileSync(join(folder, `${name}.crt`)), key: readFileSync(join(folder, `${name}.key`)) }),
    renew: (renewed) => {
      runMakeCertificates(folder, renewed);
      handOver();
    },
    rotateAuthority: (step) => {
      execFileSync("sh", [rotateAuthorityScript, folder, step], { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" }, stdio: "pipe" });
      handOver();
    },
  };
}

/** The query of a connection string that verifies the server against the deployment's CA, as the services' does. */
export function verifiedTls(ca: string): string {
  return `?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca)}`;
}
