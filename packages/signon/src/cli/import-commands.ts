import { importFromSignon, importReportLines } from "../import-from-signon/import-from-signon.js";
import { UsageError, type Command } from "./output.js";

const usage =
  "signon import from-signon [MYSQL_URL] [--dry-run] [--stretches N] [--json]   (the URL, or SIGNON_IMPORT_SOURCE_URL: mysql://user:password@host:3306/signon_production; " +
  "ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY and ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT bring 2-step secrets over)";

/** Moving from GOV.UK Signon (docs/operations.md, "Moving from GOV.UK Signon"). */
export const importCommands: Record<string, Command> = {
  "import from-signon": {
    usage,
    options: { "dry-run": { type: "boolean" }, stretches: { type: "string" } },
    positionals: ["url"],
    async run(ctx, options, env) {
      const sourceUrl = typeof options["url"] === "string" ? options["url"] : env["SIGNON_IMPORT_SOURCE_URL"];
      if (!sourceUrl) throw new UsageError(`Give the Signon database's URL (or SIGNON_IMPORT_SOURCE_URL)\n${usage}`);
      if (!/^mysql:\/\//.test(sourceUrl)) throw new UsageError("The Signon database's URL starts with mysql://");
      const stretches = options["stretches"] === undefined ? 1000 : Number(options["stretches"]);
      if (!Number.isInteger(stretches) || stretches < 1 || stretches > 100_000) throw new UsageError("--stretches is Devise's stretches in Signon, 1 to 100000 (1000 in its production)");
      const primaryKey = env["ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY"];
      const derivationSalt = env["ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT"];
      if ((primaryKey === undefined) !== (derivationSalt === undefined)) {
        throw new UsageError("Give both ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY and ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT, or neither");
      }
      // A Signon database that cannot be read says so in its own sentence (SignonSourceError), printed as any failure.
      const report = await importFromSignon(ctx, {
        sourceUrl,
        dryRun: options["dry-run"] === true,
        stretches,
        activeRecordKeys: primaryKey && derivationSalt ? { primaryKeys: primaryKey.split(",").map((key) => key.trim()), derivationSalt } : null,
      });
      return {
        json: {
          dry_run: report.dryRun,
          read: report.read,
          counts: report.counts,
          two_step_to_set_up_again: report.twoStepToSetUpAgain,
          refusals: report.refusals,
          seconds: report.seconds,
          phases: report.phases,
        },
        text: importReportLines(report),
      };
    },
  },
};
