import { AccountError } from "../accounts/manage-users.js";
import { exportCredentials, type ExportDestination } from "../deployment/export-credentials.js";
import { hostRewrite, HostPatternError, type HostRewrite } from "../deployment/host-rewrite.js";
import { dns1123Label } from "../deployment/kubernetes-secrets.js";
import { rewriteApplicationUris, uriFieldWords } from "../deployment/rewrite-application-uris.js";
import { UsageError, type Command, type Options } from "./output.js";

function text(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === "string" ? value : undefined;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

const rewriteUsage = "signon apps rewrite-uris --from HOST --to HOST [--dry-run] [--allow-production] [--json]   (HOST: [https://]host[:port], or *.domain for every host under it)";

const exportUsage =
  "signon credentials export (--app NAME … | --api-user EMAIL[:APP] …) (--out DIR | --stdout) [--namespace NS] [--replace-secrets] [--expires-in SECONDS] [--dry-run] [--json]";

/** The commands that carry Sign-on's data from one environment to another, or credentials to where applications run. */
export const deploymentCommands: Record<string, Command> = {
  "apps rewrite-uris": {
    usage: rewriteUsage,
    options: { from: { type: "string" }, to: { type: "string" }, "dry-run": { type: "boolean" }, "allow-production": { type: "boolean" } },
    async run(ctx, options) {
      const from = text(options, "from");
      const to = text(options, "to");
      if (from === undefined || to === undefined) throw new UsageError("--from and --to are required");
      let rewrite: HostRewrite;
      try {
        rewrite = hostRewrite(from, to);
      } catch (error) {
        if (error instanceof HostPatternError) throw new UsageError(error.message);
        throw error;
      }
      if (ctx.config.mode === "production" && options["allow-production"] !== true) {
        throw new AccountError(
          "Refused: NODE_ENV is production. Rewriting every application's URIs is for a copy of another environment's database, such as staging made from production's; " +
            "run it where that copy is, or add --allow-production if this database really is the one to change",
        );
      }
      const dryRun = options["dry-run"] === true;
      const rewrites = await rewriteApplicationUris(ctx, rewrite, { dryRun });
      const uris = rewrites.reduce((sum, planned) => sum + planned.changes.length, 0);
      const summary =
        rewrites.length === 0
          ? `No application has a URI on ${rewrite.from.text}; nothing to rewrite.`
          : dryRun
            ? `Dry run: ${plural(uris, "URI", "URIs")} of ${plural(rewrites.length, "application", "applications")} would change; nothing was saved.`
            : `Rewrote ${plural(uris, "URI", "URIs")} of ${plural(rewrites.length, "application", "applications")}; each application's event log records its change.`;
      return {
        json: {
          dry_run: dryRun,
          from: rewrite.from.text,
          to: rewrite.to.text,
          applications: rewrites.map((planned) => ({ name: planned.name, changes: planned.changes })),
          changed_applications: rewrites.length,
          changed_uris: uris,
        },
        text: [
          ...rewrites.flatMap((planned) => [planned.name, ...planned.changes.map((change) => `  ${uriFieldWords(change.field)}: ${change.old} → ${change.new}`)]),
          summary,
        ],
      };
    },
  },

  "credentials export": {
    usage: exportUsage,
    options: {
      app: { type: "string", multiple: true },
      "api-user": { type: "string", multiple: true },
      out: { type: "string" },
      stdout: { type: "boolean" },
      namespace: { type: "string" },
      "replace-secrets": { type: "boolean" },
      "expires-in": { type: "string" },
      "dry-run": { type: "boolean" },
    },
    async run(ctx, options) {
      const applications = (options.app as string[] | undefined) ?? [];
      const apiUsers = ((options["api-user"] as string[] | undefined) ?? []).map((given) => {
        const at = given.indexOf(":");
        const email = (at === -1 ? given : given.slice(0, at)).trim();
        const application = at === -1 ? null : given.slice(at + 1).trim();
        if (email === "" || application === "") throw new UsageError(`--api-user is EMAIL or EMAIL:APPLICATION, not ${given}`);
        return { email, application };
      });
      if (applications.length === 0 && apiUsers.length === 0) throw new UsageError("Name what to export: --app NAME and/or --api-user EMAIL[:APP]");
      const out = text(options, "out");
      const toStdout = options.stdout === true;
      if ((out !== undefined) === toStdout) throw new UsageError("Give --out DIR (one file per secret) or --stdout (the manifests printed), one of them");
      if (out !== undefined && out.trim() === "") throw new UsageError("--out is a directory");
      const dryRun = options["dry-run"] === true;
      if (toStdout && options.json === true && !dryRun) throw new UsageError("--stdout prints the manifests as YAML; leave out --json");
      const namespace = text(options, "namespace") ?? null;
      if (namespace !== null && !dns1123Label.test(namespace)) {
        throw new UsageError(`--namespace ${namespace} is not a Kubernetes namespace name: lower-case letters, digits and hyphens, at most 63, starting and ending with a letter or digit`);
      }
      if (applications.length > 0 && options["replace-secrets"] !== true && !dryRun) {
        throw new UsageError(
          "An application's client secret is kept only as a digest, so exporting it means giving the application a new one, and its current secret stops working at once. " +
            "Add --replace-secrets to do that (deploy the new secret straight after), or --dry-run to see what would be written",
        );
      }
      const expiresIn = text(options, "expires-in");
      if (expiresIn !== undefined && !/^\d{1,10}$/.test(expiresIn)) throw new UsageError("--expires-in is a whole number of seconds");
      const destination: ExportDestination = out !== undefined ? { kind: "directory", path: out } : { kind: "stdout" };
      const result = await exportCredentials(ctx, {
        applications,
        apiUsers,
        namespace,
        destination,
        tokenLifetimeSeconds: expiresIn === undefined ? undefined : Number(expiresIn),
        dryRun,
      });
      const where = (file: string | null) => file ?? "standard output";
      const what = (secret: (typeof result.secrets)[number]) =>
        secret.kind === "client_secret" ? `${secret.application}: client id and a new client secret` : `${secret.apiUser ?? ""} on ${secret.application}: a new API token`;
      const notes = [
        ...(result.secrets.some((secret) => secret.kind === "client_secret") ? ["The applications' previous client secrets no longer work: deploy the new ones now."] : []),
        ...(result.secrets.some((secret) => secret.kind === "api_token") ? ["Earlier tokens of these API users still work until they expire or are revoked on their pages, so clients can switch over."] : []),
      ];
      const json = {
        dry_run: dryRun,
        namespace,
        secrets: result.secrets.map((secret) => ({
          name: secret.name,
          kind: secret.kind,
          application: secret.application,
          api_user: secret.apiUser,
          file: secret.file,
          expires_at: secret.expiresAt?.toISOString() ?? null,
        })),
      };
      if (dryRun) {
        return {
          json,
          text: [...result.secrets.map((secret) => `${secret.name}\t${what(secret)} → ${where(secret.file)}`), `Dry run: ${plural(result.secrets.length, "secret", "secrets")} would be written; nothing was issued or replaced.`],
        };
      }
      if (toStdout) return { json, text: [result.manifests.replace(/\n$/, "")] };
      return {
        json,
        text: [...result.secrets.map((secret) => `${secret.name}\t${what(secret)} → ${where(secret.file)}`), `Wrote ${plural(result.secrets.length, "secret", "secrets")} (mode 0600).`, ...notes],
      };
    },
  },
};
