import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { resolveSecretKey } from "../security/secret-box.js";
import { appendEvents, applyConverted, applyPermissions, lastImportedEvent, type ImportCounts } from "./apply.js";
import { derivedKeys, type ActiveRecordKeys } from "./active-record-encryption.js";
import { convertSignonData, uuidShape, type Refusal } from "./convert.js";
import { auditEventOf } from "./signon-events.js";
import { openSignonSnapshot, readSignonEvents, type SignonSnapshot } from "./signon-source.js";


export interface SignonImportOptions {
  /** `mysql://user:password@host:3306/database` of the Signon database. */
  sourceUrl: string;
  /** Roll everything back once it is known what the run would do. */
  dryRun: boolean;
  /** Devise's stretches in Signon (1,000 in its production). */
  stretches: number;
  /** Signon's Active Record encryption keys, to bring 2-step secrets over; without them, those people set 2-step up again. */
  activeRecordKeys: ActiveRecordKeys | null;
}

export interface SignonImportReport {
  dryRun: boolean;
  /** How many rows of each kind Signon holds. */
  read: { organisations: number; applications: number; users: number; permissions: number; tokens: number };
  counts: ImportCounts;
  refusals: Refusal[];
  twoStepToSetUpAgain: number;
  seconds: number;
  /** Seconds spent reading Signon, turning its rows into Sign-on's, writing them, and bringing the event log over. */
  phases: { read: number; convert: number; write: number; events: number };
}

class DryRunDone extends Error {
  constructor(readonly report: { counts: ImportCounts; refusals: Refusal[] }) {
    super("dry run");
  }
}

/**
 * Brings a GOV.UK Signon database over (docs/operations.md, "Moving from
 * GOV.UK Signon"): reads it in one consistent snapshot, turns its rows into
 * Sign-on's (same uids, client ids and secrets, tokens and password hashes),
 * and writes what is new or changed since the last run in one transaction,
 * with one `imported_from_signon` event. A dry run does all of it and rolls
 * it back, so that its report is exactly what a real run would do.
 */
export async function importFromSignon(ctx: SignonContext, options: SignonImportOptions): Promise<SignonImportReport> {
  const started = Date.now();
  const now = ctx.now();
  const clock = new PhaseClock();
  const snapshot = await openSignonSnapshot(options.sourceUrl, now);
  try {
    return await importSnapshot(ctx, options, snapshot, started, now, clock);
  } finally {
    await snapshot.close();
  }
}

/** Seconds spent in each phase of a run: each phase runs from the previous one's end (or `start`) to its own. */
class PhaseClock {
  readonly phases: SignonImportReport["phases"] = { read: 0, convert: 0, write: 0, events: 0 };
  #since = Date.now();

  start(): void {
    this.#since = Date.now();
  }

  end(phase: keyof SignonImportReport["phases"]): void {
    this.phases[phase] += (Date.now() - this.#since) / 1000;
    this.#since = Date.now();
  }
}

async function importSnapshot(
  ctx: SignonContext,
  options: SignonImportOptions,
  snapshot: SignonSnapshot,
  started: number,
  now: Date,
  clock: PhaseClock,
): Promise<SignonImportReport> {
  const { data } = snapshot;
  clock.end("read");
  const converted = convertSignonData(data, {
    now,
    emailPolicy: ctx.config.emailPolicy,
    stretches: options.stretches,
    activeRecordKeys: options.activeRecordKeys ? derivedKeys(options.activeRecordKeys) : [],
    secretKey: await resolveSecretKey(ctx.config.secretKey, ctx.config.dataDir),
  });
  clock.end("convert");
  let outcome: { counts: ImportCounts; refusals: Refusal[] };
  try {
    outcome = await ctx.db.transaction(async (tx) => {
      // A transaction tried again starts from the refusals of the conversion alone.
      const refusals = [...converted.refusals];
      clock.start();
      const applied = await applyConverted(tx, converted, refusals, now);
      // Signon's permissions, read and written in batches, from the same snapshot.
      converted.convertPermissions.retired.clear();
      const permissionBatches = async function* () {
        for await (const batch of snapshot.permissions()) yield converted.convertPermissions.convert(batch);
      };
      const permissions = await applyPermissions(tx, permissionBatches(), applied.applicationIds, applied.importedUids, now);
      refusals.push(...converted.convertPermissions.refusals());
      clock.end("write");
      // Signon's event log, from where the last run stopped (it only grows).
      const uidOf = new Map(data.users.flatMap((user) => (uuidShape.test(user.uid.toLowerCase()) ? [[user.id, user.uid.toLowerCase()] as const] : [])));
      let events = 0;
      for await (const batch of readSignonEvents(options.sourceUrl, await lastImportedEvent(tx))) {
        await appendEvents(tx, batch.map((event) => auditEventOf(event, uidOf, applied.applicationIds)), now);
        events += batch.length;
      }
      clock.end("events");
      const counts: ImportCounts = { ...applied.counts, permissions, events: { created: events, updated: 0, unchanged: 0, removed: 0 } };
      await audit(tx, {
        action: "imported_from_signon",
        at: now,
        details: { counts, refused: refusals.length, two_step_to_set_up_again: converted.twoStepToSetUpAgain },
      });
      if (options.dryRun) throw new DryRunDone({ counts, refusals });
      return { counts, refusals };
    });
  } catch (error) {
    if (!(error instanceof DryRunDone)) throw error;
    outcome = error.report;
  }
  return {
    dryRun: options.dryRun,
    read: {
      organisations: data.organisations.length,
      applications: data.applications.length,
      users: data.users.length,
      permissions: data.permissionCount,
      tokens: data.tokens.length,
    },
    counts: outcome.counts,
    refusals: outcome.refusals,
    twoStepToSetUpAgain: converted.twoStepToSetUpAgain,
    seconds: (Date.now() - started) / 1000,
    phases: clock.phases,
  };
}

const kindNames: Record<keyof ImportCounts, string> = {
  organisations: "organisations",
  applications: "applications",
  users: "people and API users",
  passwords: "passwords",
  twoStepSecrets: "2-step secrets",
  permissions: "permissions",
  tokens: "tokens",
  events: "events of the event log",
};

/** The report as lines for a terminal: a line per kind, every refusal, and what people will notice. */
export function importReportLines(report: SignonImportReport): string[] {
  const lines = [
    report.dryRun ? "Dry run, nothing was saved. A real run would:" : `Imported from Signon in ${report.seconds.toFixed(1)} s:`,
    ...Object.entries(report.counts).map(
      ([kind, counts]) =>
        `  ${kindNames[kind as keyof ImportCounts]}: ${counts.created} new, ${counts.updated} changed, ${counts.unchanged} unchanged${counts.removed > 0 ? `, ${counts.removed} gone from Signon${kind === "permissions" ? " (removed)" : kind === "tokens" ? " (revoked)" : kind === "twoStepSecrets" ? " (reset)" : " (left here)"}` : ""}`,
    ),
  ];
  if (report.twoStepToSetUpAgain > 0) {
    lines.push(`${report.twoStepToSetUpAgain} people with 2-step in Signon will set it up again (their secrets could not be opened: give ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY and ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT)`);
  }
  lines.push(report.refusals.length === 0 ? "Nothing refused." : `${report.refusals.length} refused:`);
  for (const refusal of report.refusals) lines.push(`  ${refusal.kind}\t${refusal.what}\t${refusal.reason}`);
  return lines;
}
