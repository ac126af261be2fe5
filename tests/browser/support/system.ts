import { Writable } from "node:stream";
import { freePort, useTestDatabase } from "@tessera/db/testing";
import editorialApp from "@tessera/editorial-app";
import { signonMigrations, startSignon, type RunningSignon } from "@tessera/signon";
import { runCli } from "@tessera/signon/cli";
import { signonClientMigrations } from "@tessera/signon-client/postgres";
import Fastify, { type FastifyInstance } from "fastify";

/** The password every person created by `system.createUser` has. */
export const password = "Tessera browser test pass 42!";

/** Sign-on and the example application on real ports, sharing one test database. */
export interface TestSystem {
  signonUrl: string;
  appUrl: string;
  /** Runs a `signon` CLI command in this process against the same database; returns its `--json` output. */
  signonCli(...args: string[]): Promise<Record<string, unknown>>;
  /** Creates a person with `password` and optional permissions on the example application ("Editorial app"). */
  createUser(person: { email: string; name: string; role?: string; permissions?: string[] }): Promise<void>;
  close(): Promise<void>;
}

export const appName = "Editorial app";

/**
 * Starts the real Sign-on (its own start-up, push worker included) and the
 * example application registered in it, each listening on 127.0.0.1.
 * `publicHost` is the host of Sign-on's public URL (127.0.0.1 unless given).
 * `twoStepRequiredRoles` is Sign-on's `SIGNON_TWO_STEP_REQUIRED_ROLES`:
 * `none` unless given, so the administrators of the flows about other things
 * work without setting up 2-step verification; its own flow passes the
 * installation's default.
 */
export async function startTestSystem(label: string, options: { twoStepRequiredRoles?: string; publicHost?: string } = {}): Promise<TestSystem> {
  const database = await useTestDatabase({ migrations: [signonMigrations, signonClientMigrations], label });
  const [signonPort, appPort] = [await freePort(), await freePort()];
  const env: Record<string, string> = {
    NODE_ENV: "development",
    DATABASE_URL: database.url,
    SIGNON_PORT: String(signonPort),
    // Pages are visited at this address; passkeys need a host name (`localhost`), as an IP address cannot be an RP ID.
    SIGNON_PUBLIC_URL: `http://${options.publicHost ?? "127.0.0.1"}:${signonPort}`,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_SECRET_KEY: "7a".repeat(32),
    SIGNON_MAIL_PRINT: "false",
    SIGNON_PUSH_RETRY_BASE_MS: "100",
    SIGNON_TWO_STEP_REQUIRED_ROLES: options.twoStepRequiredRoles ?? "none",
  };
  const signon: RunningSignon = await startSignon(env, { logger: false });

  async function signonCli(...args: string[]): Promise<Record<string, unknown>> {
    let stdout = "";
    let stderr = "";
    const sink = (append: (text: string) => void) =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          append(chunk.toString("utf8"));
          done();
        },
      });
    const code = await runCli([...args, "--json"], {
      env,
      stdout: sink((text) => (stdout += text)),
      stderr: sink((text) => (stderr += text)),
    });
    if (code !== 0) throw new Error(`signon ${args.join(" ")} failed (${code}): ${stderr}`);
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  const appUrlBase = `http://127.0.0.1:${appPort}`;
  const redirectUri = `${appUrlBase}/auth/gds/callback`;
  const registered = await signonCli(
    "apps", "create", "--name", appName, "--redirect-uri", redirectUri,
    "--home-uri", `${appUrlBase}/`, "--push-base", `${appUrlBase}/auth/gds/api`, "--permissions", "editor,admin",
  );
  const app: FastifyInstance = Fastify({ logger: false });
  await app.register(editorialApp, {
    config: {
      signonUrl: signon.url,
      clientId: String(registered["client_id"]),
      clientSecret: String(registered["client_secret"]),
      redirectUri,
      database: { url: database.url },
    },
  });
  await app.listen({ host: "127.0.0.1", port: appPort });

  return {
    signonUrl: signon.url,
    appUrl: appUrlBase,
    signonCli,
    async createUser(person) {
      await signonCli("users", "create", "--email", person.email, "--name", person.name, "--password", password, ...(person.role ? ["--role", person.role] : []));
      if (person.permissions && person.permissions.length > 0) {
        await signonCli("permissions", "grant", "--email", person.email, "--app", appName, "--permissions", person.permissions.join(","));
      }
    },
    async close() {
      await app.close();
      await signon.close();
      await database.close();
    },
  };
}
