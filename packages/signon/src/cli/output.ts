import type { Writable } from "node:stream";
import type { SignonContext } from "../context.js";

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

/** Parsed option values, as `node:util` `parseArgs` gives them. */
export type Options = Record<string, string | boolean | string[] | undefined>;

/** A CLI command: the options it takes and what it does. */
export interface Command {
  usage: string;
  options: Record<string, { type: "string" | "boolean"; multiple?: boolean }>;
  /** Names of the positional arguments it takes, in order (none when absent). */
  positionals?: readonly string[];
  /** `env` is the CLI's environment, for settings a command reads that the server does not. */
  run(ctx: SignonContext, options: Options, env: Record<string, string | undefined>): Promise<CommandResult>;
}
