import { useTestDatabase } from "@tessera/db/testing";
import { signonMigrations } from "@tessera/signon";
import { signonClientMigrations } from "@tessera/signon-client/postgres";
import { freePort, signonCli as shippedSignonCli, startShipped, type ServiceProcess } from "@tessera/test-support";

/** The password every person created by `system.createUser` has. */
export const password = "Tessera browser test pass 42!";

/** Sign-on and the example application on real ports, sharing one test database. */
export interface TestSystem {
  signonUrl: string;
  appUrl: string;
  /** The environment Sign-on and its command line run with. */
  signonEnv: Record<string, string>;
  /** Runs the shipped `signon` command line against the same database; returns its `--json` output. */
  signonCli(...args: string[]): Promise<Record<string, unknown>>;
  /** Creates a person with `password` and optional permissions on the example application ("Editorial app"). */
  createUser(person: { email: string; name: string; role?: string; permissions?: string[] }): Promise<void>;
  close(): Promise<void>;
}

export const appName = "Editorial app";

/**
 * Starts Sign-on and the example application registered in it as shipped (their
 * built entry points, each in a process of its own, as npm start runs them),
 * each listening on 127.0.0.1.
 * `publicHost` is the host of Sign-on's public URL (127.0.0.1 unless given).
 * `twoStepRequiredRoles` is Sign-on's `SIGNON_TWO_STEP_REQUIRED_ROLES`:
 * `none` unless given, so the administrators of the flows about other things
 * work without setting up 2-step verification; its own flow passes the
 * installation's default. `signonEnv` adds to (or overrides) Sign-on's
 * environment, for the flows of a setting.
 */
export async function startTestSystem(
  label: string,
  options: { twoStepRequiredRoles?: string; publicHost?: string; signonEnv?: Record<string, string> } = {},
): Promise<TestSystem> {
  const database = await useTestDatabase({ migrations: [signonMigrations, signonClientMigrations], label });
  const [signonPort, appPort] = [await freePort(), await freePort()];
  const signonUrl = `http://${options.publicHost ?? "127.0.0.1"}:${signonPort}`;
  const env: Record<string, string> = {
    NODE_ENV: "development",
    DATABASE_URL: database.url,
    // Pages are visited at this address; passkeys need a host name (`localhost`), as an IP address cannot be an RP ID.
    SIGNON_PUBLIC_URL: signonUrl,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_SECRET_KEY: "7a".repeat(32),
    SIGNON_MAIL_PRINT: "false",
    SIGNON_PUSH_RETRY_BASE_MS: "100",
    SIGNON_TWO_STEP_REQUIRED_ROLES: options.twoStepRequiredRoles ?? "none",
    ...options.signonEnv,
  };
  const services: ServiceProcess[] = [];
  async function close(): Promise<void> {
    await Promise.all(services.map((service) => service.stop()));
    await database.close();
  }
  try {
    services.push(await startShipped("signon", { port: signonPort, env, name: `signon-${label}` }));
    const signonCli = (...args: string[]) => shippedSignonCli(env, ...args);
    const appUrlBase = `http://127.0.0.1:${appPort}`;
    const registered = await signonCli(
      "apps", "create", "--name", appName, "--redirect-uri", `${appUrlBase}/auth/gds/callback`,
      "--home-uri", `${appUrlBase}/`, "--push-base", `${appUrlBase}/auth/gds/api`, "--permissions", "editor,admin",
    );
    services.push(
      await startShipped("editorial", {
        port: appPort,
        name: `editorial-${label}`,
        env: {
          DATABASE_URL: database.url,
          SIGNON_URL: signonUrl,
          EDITORIAL_APP_URL: appUrlBase,
          EDITORIAL_APP_CLIENT_ID: String(registered["client_id"]),
          EDITORIAL_APP_CLIENT_SECRET: String(registered["client_secret"]),
          LOG_LEVEL: "warn",
        },
      }),
    );
    return {
      signonUrl,
      appUrl: appUrlBase,
      signonEnv: env,
      signonCli,
      async createUser(person) {
        await signonCli("users", "create", "--email", person.email, "--name", person.name, "--password", password, ...(person.role ? ["--role", person.role] : []));
        if (person.permissions && person.permissions.length > 0) {
          await signonCli("permissions", "grant", "--email", person.email, "--app", appName, "--permissions", person.permissions.join(","));
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
