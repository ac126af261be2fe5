import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { useTestDatabase } from "@tessera/db/testing";
import { signonMigrations } from "@tessera/signon";
import { freePort, signonCli, startShipped } from "@tessera/test-support";

/** The name the Ruby application is registered under in Sign-on. */
export const appName = "Ruby app";

/** Sign-on and the Ruby application, each on a real port of 127.0.0.1. */
export interface RubySystem {
  signonUrl: string;
  rubyUrl: string;
  /** Runs the shipped `signon` command line against the same database; returns its `--json` output. */
  signon(...args: string[]): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The Ruby application's credentials in Sign-on. */
export interface RubyApplication {
  clientId: string;
  secret: string;
}

export interface RubySystemOptions {
  /** The Ruby application's port, when the caller needs its address first. */
  rubyPort?: number;
  /** More settings of Sign-on. */
  env?: Record<string, string>;
  /**
   * How the Ruby application comes to be known to Sign-on, given the shipped command line and the application's
   * address; by default `signon apps create` with gds-sso's paths.
   */
  application?: (signon: (...args: string[]) => Promise<Record<string, unknown>>, env: Record<string, string>, rubyUrl: string) => Promise<RubyApplication>;
}

/**
 * Starts Sign-on as shipped (its built entry point in a process of its own, push worker included), makes the Ruby
 * application known to it (registered with gds-sso's paths, unless `options.application` says otherwise), and starts
 * `app/server.rb` with the client id and secret it has there.
 */
export async function startRubySystem(options: RubySystemOptions = {}): Promise<RubySystem> {
  const database = await useTestDatabase({ migrations: [signonMigrations], label: "ruby" });
  const [signonPort, rubyPort] = [await freePort(), options.rubyPort ?? (await freePort())];
  const env: Record<string, string> = {
    NODE_ENV: "development",
    DATABASE_URL: database.url,
    SIGNON_PUBLIC_URL: `http://127.0.0.1:${signonPort}`,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_SECRET_KEY: "5e".repeat(32),
    SIGNON_MAIL_PRINT: "false",
    SIGNON_PUSH_RETRY_BASE_MS: "100",
    ...options.env,
  };
  const signon = await startShipped("signon", { port: signonPort, env });
  const signonCommand = (...args: string[]) => signonCli(env, ...args);

  const rubyUrl = `http://127.0.0.1:${rubyPort}`;
  const application = await (options.application ?? registerRubyApplication)(signonCommand, env, rubyUrl);
  const ruby = await startRuby({
    SIGNON_URL: signon.url,
    OAUTH_ID: application.clientId,
    OAUTH_SECRET: application.secret,
    PORT: String(rubyPort),
  });

  return {
    signonUrl: signon.url,
    rubyUrl,
    signon: signonCommand,
    async close() {
      ruby.kill("SIGTERM");
      await signon.stop();
      await database.close();
    },
  };
}

/** Registers the Ruby application as an operator would, with gds-sso's callback and push paths. */
async function registerRubyApplication(signon: (...args: string[]) => Promise<Record<string, unknown>>, _env: Record<string, string>, rubyUrl: string): Promise<RubyApplication> {
  const registered = await signon(
    "apps", "create", "--name", appName, "--redirect-uri", `${rubyUrl}/auth/gds/callback`,
    "--push-base", `${rubyUrl}/auth/gds/api`, "--permissions", "editor,admin",
  );
  return { clientId: String(registered["client_id"]), secret: String(registered["client_secret"]) };
}

/** Starts the Ruby application and waits until WEBrick says it listens. */
async function startRuby(env: Record<string, string>): Promise<ChildProcess> {
  const server = fileURLToPath(new URL("../app/server.rb", import.meta.url));
  const ruby = spawn("ruby", [server], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  ruby.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const listening = new Promise<void>((resolve) => ruby.stdout?.on("data", (chunk: Buffer) => chunk.toString("utf8").includes("listening") && resolve()));
  const exited = once(ruby, "exit").then(([code]) => {
    throw new Error(`the Ruby application exited (${String(code)}): ${stderr}`);
  });
  await Promise.race([listening, exited]);
  exited.catch(() => undefined); // a later exit is the test's end, not a failure
  return ruby;
}
