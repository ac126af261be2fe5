import { chmod, chown, copyFile, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { silentLogger } from "../logger.js";
import { startPostgresServer } from "../postgres-server/postgres-server.js";
import { serverUser } from "../postgres-server/server-user.js";
import { removeDataFolder } from "./remove-data-folder.js";

/** Options of {@link startHostsslServer}. */
export interface HostsslServerOptions {
  /** The server's certificate and key (PEM), e.g. a machine's from `make-certificates.sh`. */
  certFile: string;
  keyFile: string;
  /** The CA that client certificates must lead to (`ssl_ca_file`); none: the server asks for none. */
  caFile?: string;
  /** pg_hba.conf's lines (default: `hostssl` with scram-sha-256 from 127.0.0.1 and ::1, nothing else). */
  hba?: readonly string[];
}

/** A PostgreSQL server that serves TLS on 127.0.0.1, for tests of what clients do with it. */
export interface HostsslServer {
  /** Its `postgres` database as the superuser, at 127.0.0.1, without TLS parameters: add them. */
  readonly url: string;
  readonly port: number;
  /** Stops the server and deletes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts an embedded PostgreSQL server on a new cluster in a temporary folder
 * with `ssl = on`, the given certificate and key, and a pg_hba.conf that by
 * default accepts only `hostssl` connections (scram-sha-256): what the
 * deployment's database machines do. Run by root, the server (as the account
 * `postgres`) gets copies of the files it must read.
 */
export async function startHostsslServer(options: HostsslServerOptions): Promise<HostsslServer> {
  const home = await mkdtemp(path.join(tmpdir(), "tessera-hostssl-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(home, 0o711);
  try {
    const served = path.join(home, "tls");
    await mkdir(served, { mode: 0o700 });
    await copyFile(options.certFile, path.join(served, "server.crt"));
    await copyFile(options.keyFile, path.join(served, "server.key"));
    if (options.caFile !== undefined) await copyFile(options.caFile, path.join(served, "ca.crt"));
    const hba = options.hba ?? ["hostssl all all 127.0.0.1/32 scram-sha-256", "hostssl all all ::1/128 scram-sha-256"];
    await writeFile(path.join(served, "pg_hba.conf"), `${hba.join("\n")}\n`);
    // PostgreSQL refuses a key that others can read; the certificate and key files are the server account's.
    await chmod(path.join(served, "server.key"), 0o600);
    const user = await serverUser(silentLogger);
    if (user.switched) {
      for (const file of ["", "server.crt", "server.key", "pg_hba.conf", ...(options.caFile === undefined ? [] : ["ca.crt"])]) {
        await chown(path.join(served, file), user.uid, user.gid);
      }
    }
    const server = await startPostgresServer({
      dataDir: path.join(home, "postgres"),
      transport: "tcp",
      durable: false,
      settings: {
        ssl: "on",
        ssl_cert_file: path.join(served, "server.crt"),
        ssl_key_file: path.join(served, "server.key"),
        ...(options.caFile === undefined ? {} : { ssl_ca_file: path.join(served, "ca.crt") }),
        hba_file: path.join(served, "pg_hba.conf"),
      },
    });
    return {
      url: server.url,
      port: Number(new URL(server.url).port),
      stop: async () => {
        try {
          await server.stop();
        } finally {
          await removeDataFolder(home);
        }
      },
    };
  } catch (error) {
    await removeDataFolder(home);
    throw error;
  }
}
