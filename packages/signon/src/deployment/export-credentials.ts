import { chmod, mkdir, open, rename, stat, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { AccountError, requireUserByEmail } from "../accounts/manage-users.js";
import { requireApplication } from "../applications/permissions.js";
import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { issueOperatorToken } from "../oauth/issue-operator-token.js";
import { listLiveApplications, updateApplicationRow } from "../repositories/application-admin.js";
import type { Application } from "../repositories/applications.js";
import { listPermissions } from "../repositories/permissions.js";
import type { User } from "../repositories/users.js";
import { randomHex, sha256Hex } from "../security/random.js";
import { apiTokenSecretName, applicationSecretName, renderSecretManifest, type SecretManifest } from "./kubernetes-secrets.js";

/** Where the manifests go: files in a directory, or standard output. */
export type ExportDestination = { kind: "directory"; path: string } | { kind: "stdout" };

/** What to export. */
export interface CredentialsExportRequest {
  /** Application names: each gets a new client secret. */
  applications: readonly string[];
  /** API users by e-mail address, each with one application, or `null` for every application where it holds `signin`. */
  apiUsers: readonly { email: string; application: string | null }[];
  namespace: string | null;
  destination: ExportDestination;
  /** How long the new API tokens live (default: as `signon tokens issue`, two years). */
  tokenLifetimeSeconds?: number | undefined;
  /** Only say what would be written: nothing is issued, replaced or written. */
  dryRun: boolean;
}

/** One secret exported (or, in a dry run, that would be). */
export interface ExportedSecret {
  name: string;
  kind: "client_secret" | "api_token";
  application: string;
  /** The API user's e-mail address, for a token. */
  apiUser: string | null;
  /** The file written, or `null` on standard output. */
  file: string | null;
  /** When the new token expires, for a token. */
  expiresAt: Date | null;
}

/** What an export did: each secret, and for standard output the YAML (several documents). */
export interface CredentialsExport {
  secrets: ExportedSecret[];
  manifests: string;
}

/** Annotation keys of the manifests. */
const annotation = {
  application: "signon.tessera/application",
  apiUser: "signon.tessera/api-user",
  expiresAt: "signon.tessera/expires-at",
  exportedAt: "signon.tessera/exported-at",
} as const;

type PlannedSecret =
  | { kind: "client_secret"; name: string; application: Application }
  | { kind: "api_token"; name: string; application: Application; apiUser: User };

function refuseRetired(application: Application): Application {
  if (application.retired) throw new AccountError(`${application.name} is retired: bring it back before exporting its credentials`);
  return application;
}

/** The secrets a request names, each once, checked: known, live applications; API users that are not suspended and hold `signin`. */
async function planSecrets(ctx: SignonContext, request: CredentialsExportRequest): Promise<PlannedSecret[]> {
  const planned: PlannedSecret[] = [];
  const seen = new Set<string>();
  for (const name of request.applications) {
    const application = refuseRetired(await requireApplication(ctx, name));
    if (seen.has(application.id)) continue;
    seen.add(application.id);
    planned.push({ kind: "client_secret", name: applicationSecretName(application.name), application });
  }
  for (const wanted of request.apiUsers) {
    const apiUser = await requireUserByEmail(ctx, wanted.email);
    if (!apiUser.isApiUser) throw new AccountError(`${apiUser.email} is not an API user: only API users' tokens are exported`);
    if (apiUser.suspendedAt !== null) throw new AccountError(`${apiUser.email} is suspended`);
    let applications: Application[];
    if (wanted.application !== null) {
      const application = refuseRetired(await requireApplication(ctx, wanted.application));
      if (!(await listPermissions(ctx.db, apiUser.uid, application.id)).includes("signin")) {
        throw new AccountError(`${apiUser.email} does not hold signin on ${application.name}; grant it first`);
      }
      applications = [application];
    } else {
      applications = [];
      for (const application of await listLiveApplications(ctx.db)) {
        if ((await listPermissions(ctx.db, apiUser.uid, application.id)).includes("signin")) applications.push(application);
      }
      if (applications.length === 0) throw new AccountError(`${apiUser.email} holds signin on no application, so it has no token to export; grant it first`);
    }
    for (const application of applications) {
      const key = `${apiUser.uid}:${application.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      planned.push({ kind: "api_token", name: apiTokenSecretName(apiUser.name, application.name), application, apiUser });
    }
  }
  const byName = new Map<string, PlannedSecret[]>();
  for (const secret of planned) byName.set(secret.name, [...(byName.get(secret.name) ?? []), secret]);
  const clashes = [...byName.values()].filter((same) => same.length > 1);
  if (clashes.length > 0) {
    const described = clashes.map((same) => `${same[0]?.name ?? ""} (${same.map((secret) => (secret.kind === "api_token" ? `${secret.apiUser.email} on ${secret.application.name}` : secret.application.name)).join(", ")})`);
    throw new AccountError(`Two secrets would have the same name: ${described.join("; ")}. Export them in separate runs, to different directories or namespaces`);
  }
  return planned;
}

/** The kernel's file systems: no secret belongs there, and Node 20's recursive `mkdir` never returns under `/proc`. */
const kernelFileSystems = ["/proc", "/sys"];

/**
 * Creates `directory` and any missing parents, one level at a time (each
 * with `mode`, less the umask): a level that cannot be made stops it with
 * that error, where a recursive `mkdir` can loop for ever (Node 20, under `/proc`).
 */
async function makeDirectories(directory: string, mode: number): Promise<void> {
  const missing: string[] = [];
  for (let level = directory; ; level = dirname(level)) {
    try {
      await stat(level);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    missing.unshift(level);
    if (dirname(level) === level) break;
  }
  for (const level of missing) {
    await mkdir(level, { mode }).catch((error: unknown) => {
      // Made meanwhile by someone else: the checks after this look at the directory as it is.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    });
  }
}

/**
 * Makes `path` a directory only its owner can open: created with mode 0700
 * when missing; an existing one is refused if its group or others may read,
 * write or enter it, and one under `/proc` or `/sys` whatever it is. Returns
 * its absolute path.
 */
async function privateDirectory(path: string): Promise<string> {
  const directory = resolve(path);
  const kernel = kernelFileSystems.find((root) => directory === root || directory.startsWith(`${root}/`));
  if (kernel !== undefined) throw new AccountError(`${directory} is under ${kernel}, a file system of the kernel: choose a directory on disk`);
  let existing;
  try {
    existing = await stat(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new AccountError(`Cannot use ${directory}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  if (existing) {
    if (!existing.isDirectory()) throw new AccountError(`${directory} is not a directory`);
    const mode = existing.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new AccountError(`${directory} can be opened by other users (mode ${mode.toString(8).padStart(4, "0")}): use a directory only you can open (chmod 700 ${directory})`);
    }
    return directory;
  }
  try {
    await makeDirectories(directory, 0o700);
    // mkdir's mode is reduced by the umask; the directory itself is made 0700 whatever the umask.
    await chmod(directory, 0o700);
  } catch (error) {
    throw new AccountError(`Cannot create ${directory}: ${(error as NodeJS.ErrnoException).code ?? "failed"}`);
  }
  return directory;
}

/** Writes `text` to a new file that only its owner can read (0600). */
async function writePrivateFile(path: string, text: string): Promise<void> {
  const file = await open(path, "wx", 0o600);
  try {
    await file.chmod(0o600);
    await file.writeFile(text, "utf8");
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * Exports credentials to where applications run, as Kubernetes `Secret`
 * manifests: for each application, `OAUTH_ID` (its client id) and
 * `OAUTH_SECRET`; for each API user and application, `BEARER_TOKEN`.
 *
 * Secrets and tokens are kept only as digests (S5), so nothing existing can
 * be read back: an export makes new ones. An application's client secret is
 * replaced, and its current one stops working at once (as on
 * `/applications/:id/rotate-secret`); an API user gets a new token, and its
 * earlier tokens keep working until they expire or are revoked, so the
 * client can switch over. Everything is issued in one transaction, with an
 * audit event per secret saying where it went (never the secret); the files
 * (one per secret, mode 0600, in a directory of mode 0700) are written before
 * the transaction commits, under temporary names, and renamed after it: a
 * failed write issues nothing. On standard output, the manifests are in the
 * return value only.
 */
export async function exportCredentials(ctx: SignonContext, request: CredentialsExportRequest): Promise<CredentialsExport> {
  const planned = await planSecrets(ctx, request);
  const directory = request.destination.kind === "directory" ? resolve(request.destination.path) : null;
  const fileOf = (name: string) => (directory === null ? null : join(directory, `${name}.yaml`));
  const lifetime = request.tokenLifetimeSeconds;
  if (request.dryRun) {
    return {
      secrets: planned.map((secret) => ({
        name: secret.name,
        kind: secret.kind,
        application: secret.application.name,
        apiUser: secret.kind === "api_token" ? secret.apiUser.email : null,
        file: fileOf(secret.name),
        expiresAt: null,
      })),
      manifests: "",
    };
  }
  if (directory !== null) await privateDirectory(directory);
  const now = ctx.now();
  const temporary: { path: string; file: string }[] = [];
  const removeTemporary = () => Promise.all(temporary.map(({ path }) => unlink(path).catch(() => undefined)));
  let exported: { secret: ExportedSecret; manifest: string }[];
  try {
    exported = await ctx.db.transaction(async (tx) => {
      const inTx: SignonContext = { ...ctx, db: tx };
      const done: { secret: ExportedSecret; manifest: string }[] = [];
      for (const secret of planned) {
        const file = fileOf(secret.name);
        const destination = file ?? "standard output";
        const details = { kind: secret.kind, secret: secret.name, namespace: request.namespace, destination };
        const manifest: SecretManifest = { name: secret.name, namespace: request.namespace, annotations: { [annotation.application]: secret.application.name }, data: {} };
        let expiresAt: Date | null = null;
        if (secret.kind === "client_secret") {
          const clientSecret = randomHex();
          await updateApplicationRow(tx, secret.application.id, { clientSecretHash: sha256Hex(clientSecret) });
          await audit(tx, { action: "application_secret_rotated", at: now, applicationId: secret.application.id });
          await audit(tx, { action: "credentials_exported", at: now, applicationId: secret.application.id, details });
          manifest.data = { OAUTH_ID: secret.application.clientId, OAUTH_SECRET: clientSecret };
        } else {
          const issued = await issueOperatorToken(inTx, { email: secret.apiUser.email, application: secret.application.name, expiresInSeconds: lifetime });
          expiresAt = issued.expiresAt;
          await audit(tx, {
            action: "credentials_exported",
            at: now,
            subjectUid: secret.apiUser.uid,
            applicationId: secret.application.id,
            details: { ...details, expires_at: issued.expiresAt.toISOString() },
          });
          manifest.annotations[annotation.apiUser] = secret.apiUser.email;
          manifest.annotations[annotation.expiresAt] = issued.expiresAt.toISOString();
          manifest.data = { BEARER_TOKEN: issued.accessToken };
        }
        manifest.annotations[annotation.exportedAt] = now.toISOString();
        const text = renderSecretManifest(manifest);
        if (file !== null && directory !== null) {
          const path = join(directory, `.${secret.name}.${randomHex(6)}.tmp`);
          temporary.push({ path, file });
          try {
            await writePrivateFile(path, text);
          } catch (error) {
            throw new AccountError(`Cannot write ${path} (${(error as NodeJS.ErrnoException).code ?? "failed"}): nothing was issued or replaced`);
          }
        }
        done.push({
          secret: { name: secret.name, kind: secret.kind, application: secret.application.name, apiUser: secret.kind === "api_token" ? secret.apiUser.email : null, file, expiresAt },
          manifest: text,
        });
      }
      return done;
    });
  } catch (error) {
    await removeTemporary();
    throw error;
  }
  for (const { path, file } of temporary) await rename(path, file);
  return {
    secrets: exported.map(({ secret }) => secret),
    manifests: directory === null ? exported.map(({ manifest }) => manifest).join("---\n") : "",
  };
}
