import { readFile } from "node:fs/promises";
import type { CompletionContext } from "../context.js";
import { reaggregate } from "../aggregation/stale.js";
import { parseCourseKey } from "../domain/keys.js";
import { checkBulkData } from "../ingest/bulk-format.js";
import { BulkLoadError, loadBulkData } from "../ingest/bulk-load.js";
import { OlxError } from "../ingest/olx.js";
import { importOlxCourse } from "../ingest/olx-import.js";
import { findCourse } from "../repositories/courses.js";

/** Where the CLI writes. */
export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

export const USAGE = `Usage:
  completion --version                          print Tessera's version
  completion load FILE                          load bulk data (JSON, see the README)
  completion import-olx DIR [--course-key KEY]  import a course tree from an OLX export
  completion reaggregate COURSE_KEY|--all       recompute stored aggregates
  completion migrate [--post-deploy]            apply database migrations only (with --post-deploy, then the post-deploy
                                                ones: only once no instance of the previous release remains)
  completion restore-point [NAME]               set a named restore point in the WAL before risky work`;

/** The command names. */
export const COMMANDS = ["load", "import-olx", "reaggregate", "migrate", "restore-point"] as const;

/**
 * Runs one CLI command against a context and returns the exit code: 0 done,
 * 1 refused (bad input; nothing written), 2 usage error.
 */
export async function runCli(args: readonly string[], ctx: CompletionContext, io: CliOutput): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case "load":
      return rest.length === 1 ? load(rest[0]!, ctx, io) : usage(io);
    case "import-olx":
      return importOlx(rest, ctx, io);
    case "reaggregate":
      return rest.length === 1 ? reaggregateCommand(rest[0]!, ctx, io) : usage(io);
    case "migrate":
      io.out("Migrations are applied.");
      return 0;
    default:
      return usage(io);
  }
}

function usage(io: CliOutput): number {
  io.err(USAGE);
  return 2;
}

async function load(file: string, ctx: CompletionContext, io: CliOutput): Promise<number> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    io.err(`Cannot read ${file} as JSON: ${(error as Error).message}`);
    return 1;
  }
  const checked = checkBulkData(value);
  if (!checked.ok) {
    io.err(`${file} is not in the bulk-load format:\n${checked.errors.join("\n")}`);
    return 1;
  }
  try {
    const summary = await loadBulkData(ctx.db, ctx.structures, ctx.settings.aggregatorTypes, checked.data, ctx.now());
    io.out(`Loaded ${file}: ${JSON.stringify(summary)}`);
    return 0;
  } catch (error) {
    if (!(error instanceof BulkLoadError)) throw error;
    io.err(`Nothing was loaded from ${file}:\n${error.problems.join("\n")}`);
    return 1;
  }
}

async function importOlx(rest: readonly string[], ctx: CompletionContext, io: CliOutput): Promise<number> {
  let directory: string | undefined;
  let courseKey: string | undefined;
  for (let index = 0; index < rest.length; index += 1) {
    const arg = rest[index]!;
    if (arg === "--course-key") {
      courseKey = rest[index + 1];
      index += 1;
      if (courseKey === undefined) return usage(io);
    } else if (arg.startsWith("--course-key=")) {
      courseKey = arg.slice("--course-key=".length);
    } else if (directory === undefined && !arg.startsWith("--")) {
      directory = arg;
    } else {
      return usage(io);
    }
  }
  if (directory === undefined) return usage(io);
  try {
    const { courseKey: imported, summary } = await importOlxCourse(ctx, directory, courseKey);
    io.out(
      `Imported ${imported} from ${directory}: ${summary.structuresChanged === 0 ? "structure unchanged" : "structure stored"}` +
        `, ${summary.learnersMarkedStale} learner(s) marked stale.`,
    );
    return 0;
  } catch (error) {
    if (error instanceof OlxError || error instanceof BulkLoadError) {
      io.err(`Nothing was imported: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

async function reaggregateCommand(target: string, ctx: CompletionContext, io: CliOutput): Promise<number> {
  if (target !== "--all") {
    if (!parseCourseKey(target)) {
      io.err(`Invalid course key: ${target}`);
      return 1;
    }
    if (!(await findCourse(ctx.db, target))) {
      io.err(`Course not found: ${target}`);
      return 1;
    }
  }
  const resolved = await reaggregate(ctx.db, ctx.structures, ctx.settings, target === "--all" ? "all" : [target], ctx.now);
  io.out(`Recomputed ${resolved} stale record(s).`);
  return 0;
}
