import { signonCli, startShipped } from "@tessera/test-support";

/** Sign-on's environment for tests: development mode, argon2 lowered so sign-in stays fast. */
function signonEnv(database: { url: string; kind: "embedded" | "postgres" }, port: number): Record<string, string> {
  return {
    NODE_ENV: "development",
    DATABASE_URL: database.url,
    SIGNON_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    // Pushes queued before the application listens are retried soon, not 5 s later.
    SIGNON_PUSH_RETRY_BASE_MS: "100",
  };
}

/** The real Sign-on, as shipped, listening on 127.0.0.1:`port`, with its command line at hand. */
export interface RealSignon {
  url: string;
  /** Runs `signon <args> --json` against the same database and returns the parsed output. */
  cli(...args: string[]): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Starts the real Sign-on as shipped (its built entry point in a process of its own: config from the environment, migrations, listen) on 127.0.0.1:`port`. */
export async function startRealSignon(
  database: { url: string; kind: "embedded" | "postgres" },
  port: number,
): Promise<RealSignon> {
  const env = signonEnv(database, port);
  const running = await startShipped("signon", { port, env });
  return {
    url: running.url,
    cli: (...args) => signonCli(env, ...args),
    close: () => running.stop(),
  };
}

/** The hidden fields of Sign-on's sign-in form. */
export function signInForm(html: string): { csrf: string; returnTo: string } {
  const csrf = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1];
  if (csrf === undefined || returnTo === undefined) throw new Error(`no sign-in form in:\n${html}`);
  return { csrf: decodeEntities(csrf), returnTo: decodeEntities(returnTo) };
}

const namedEntities: Record<string, string> = { amp: "&", quot: '"', lt: "<", gt: ">", apos: "'" };

function decodeEntities(value: string): string {
  return value.replace(/&(#\d+|[a-z]+);/g, (entity, name: string) =>
    name.startsWith("#") ? String.fromCharCode(Number(name.slice(1))) : (namedEntities[name] ?? entity),
  );
}
