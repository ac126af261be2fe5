import type { TestDatabase } from "@tessera/db/testing";
// The operator's steps run the `signon` command's own entry point in this process: each costs a database
// round trip rather than a Node.js start-up (the command line as shipped is tested where it is the subject).
import { runCli } from "@tessera/signon/cli";
import { freePort, startShipped } from "@tessera/test-support";

/** The Sign-on application name the completion service is registered under. */
export const COMPLETION_APP = "completion";

/** A Sign-on user as its operator created it: what `users create --json` printed. */
interface CreatedUser {
  readonly uid: string;
  /** Its permissions on `completion` besides `signin`, sorted and comma-separated. */
  permissions: string;
  /** The bearer token issued to it; a token shows the user's permissions of the moment. */
  token: string | undefined;
}

/**
 * The real Sign-on for one test file, as shipped: its built entry point in a
 * process of its own on a free 127.0.0.1 port, on the test file's database
 * (schema `signon` next to `completion`), with the `completion` application
 * registered. Users, permissions and bearer tokens are made the way an
 * operator makes them: with the `signon` command (`users create`,
 * `permissions grant|revoke`, `tokens issue`).
 */
export interface RealSignon {
  readonly url: string;
  /** The `completion` application's client id: what Completion checks bearer tokens as. */
  readonly clientId: string;
  /** Runs `signon <args> --json` on the test database and returns the printed object; throws with stderr when it fails. */
  cli(...args: string[]): Promise<Record<string, unknown>>;
  /**
   * A bearer token on `completion` for the user `email`, who from now on
   * holds `signin` and exactly `permissions` there. The user is created and
   * the token issued on first use (an ordinary account, or an API user when
   * `apiUser` is set); later calls change the permissions if needed and give
   * the same token, since `/user.json` reports a user's current permissions.
   */
  tokenFor(email: string, permissions?: readonly string[], options?: { apiUser?: boolean }): Promise<{ token: string; uid: string }>;
  close(): Promise<void>;
}

/**
 * Starts the real Sign-on on `database` (already migrated with `signonMigrations`) and registers `completion`.
 * With `pushBase`, `completion` is registered with that push address and Sign-on delivers its pushes there;
 * without, Sign-on delivers no pushes (they only queue).
 */
export async function startRealSignon(database: TestDatabase<Record<string, unknown>>, options: { pushBase?: string } = {}): Promise<RealSignon> {
  const env: Record<string, string> = {
    NODE_ENV: "development",
    DATABASE_URL: database.url,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_MAIL_PRINT: "false",
    SIGNON_PUSH_DELIVERY: options.pushBase === undefined ? "false" : "true",
  };
  const running = await startShipped("signon", { port: await freePort(), env, name: "completion-tests-signon" });
  async function cli(...args: string[]): Promise<Record<string, unknown>> {
    let stdout = "";
    let stderr = "";
    const code = await runCli([...args, "--json"], {
      stdout: { write: (chunk: string) => ((stdout += chunk), true) },
      stderr: { write: (chunk: string) => ((stderr += chunk), true) },
      env,
    });
    if (code !== 0) throw new Error(`signon ${args.join(" ")} failed (${code}): ${stderr}`);
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  let clientId: string;
  try {
    const pushBase = options.pushBase === undefined ? [] : ["--push-base", options.pushBase];
    ({ client_id: clientId } = (await cli("apps", "create", "--name", COMPLETION_APP, "--redirect-uri", "http://127.0.0.1:3001/auth/gds/callback", ...pushBase, "--permissions", "staff,masquerade,admin")) as { client_id: string });
  } catch (error) {
    await running.stop();
    throw error;
  }

  const users = new Map<string, CreatedUser>();
  async function user(email: string, apiUser: boolean): Promise<CreatedUser> {
    const known = users.get(email);
    if (known) return known;
    const name = email.split("@")[0] ?? email;
    const created = apiUser
      ? await cli("api-users", "create", "--email", email, "--name", name)
      : await cli("users", "create", "--email", email, "--name", name, "--generate-password");
    const record: CreatedUser = { uid: String(created["uid"]), permissions: "", token: undefined };
    await cli("permissions", "grant", "--email", email, "--app", COMPLETION_APP, "--permissions", "signin");
    users.set(email, record);
    return record;
  }

  return {
    url: running.url,
    clientId,
    cli,
    async tokenFor(email, permissions = [], options = {}) {
      const record = await user(email, options.apiUser ?? false);
      const wanted = [...permissions].sort().join(",");
      if (record.permissions !== wanted) {
        const held = record.permissions === "" ? [] : record.permissions.split(",");
        const dropped = held.filter((permission) => !permissions.includes(permission));
        if (dropped.length > 0) await cli("permissions", "revoke", "--email", email, "--app", COMPLETION_APP, "--permissions", dropped.join(","));
        if (wanted !== "") await cli("permissions", "grant", "--email", email, "--app", COMPLETION_APP, "--permissions", wanted);
        record.permissions = wanted;
      }
      record.token ??= String((await cli("tokens", "issue", "--email", email, "--app", COMPLETION_APP))["access_token"]);
      return { token: record.token, uid: record.uid };
    },
    close: () => running.stop(),
  };
}
