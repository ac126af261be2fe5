// Sign-on's own command line, run in this process against the database directly (not through the proxy).
import { runCli } from "@tessera/signon/cli";

/** Runs `signon <args> --json` with `env` and returns the printed object; throws with stderr when it fails. */
export async function signonCli(env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
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
