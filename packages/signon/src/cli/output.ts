import type { Writable } from "node:stream";

/** Where the CLI writes, passed in so tests can read it. */
export interface CliIo {
  stdout: Pick<Writable, "write">;
  stderr: Pick<Writable, "write">;
  env: Record<string, string | undefined>;
}

/** A command's result: one JSON object with `--json`, readable lines otherwise. */
export interface CommandResult {
  json: Record<string, unknown>;
  text: string[];
  /** The exit code when the command ran but did not do all it was asked (default 0). */
  exitCode?: number;
}

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}
