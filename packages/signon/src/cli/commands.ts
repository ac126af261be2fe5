import { open, readFile, stat } from "node:fs/promises";
import { renewalRuleText, renewExpiringApiTokens, setTokenAutoRenewal } from "../accounts/token-renewal.js";
import { AccountError, createApiUser, requireUserByEmail, createUser, roles, suspendUser, unlockUser, unsuspendUser, updateUserDetails, type Role } from "../accounts/manage-users.js";
import { suspendInactiveUsers } from "../accounts/inactivity.js";
import { generatePassword } from "../accounts/password-policy.js";
import { importOrganisations } from "../accounts/import-organisations.js";
import { maxImportBytes, readOrganisationImportFile } from "../accounts/organisation-import-file.js";
import { createOrganisation, requireOrganisation } from "../accounts/organisations.js";
import { firstStartCommand } from "./first-start-command.js";
import { applicationFormValues, checkApplicationForm } from "../applications/application-fields.js";
import { grantPermissions, requireApplication, revokePermissions } from "../applications/permissions.js";
import { ApplicationNameTaken, updateApplication } from "../applications/update-application.js";
import { applicationMonthlyUsers, applicationSignIns } from "../applications/usage.js";
import { processInvitationBatches, startInvitationBatch } from "../accounts/invitation-batches.js";
import { batchFileMaxBytes, BatchFileError, readBatchFile } from "../accounts/invitation-csv.js";
import { countBatchOutcomes, listInvitationBatchRows } from "../repositories/invitation-batches.js";
import { findOrganisationIdBySlugOrName } from "../repositories/organisations.js";
import { registerApplication } from "../applications/register-application.js";
import type { SignonContext } from "../context.js";
import { issueOperatorToken } from "../oauth/issue-operator-token.js";
import { listPushes, pushBaseOf, retryPush, type PushStatus } from "../repositories/push-deliveries.js";
import { resolveSecretKey } from "../security/secret-box.js";
import { checkOpenIdSettings, OpenIdSettingsError, openIdSettingsOf, setOpenIdSettings, type OpenIdClientSettings } from "../oidc/client-settings.js";
import { rotateSigningKeys } from "../oidc/signing-keys.js";
import type { Application } from "../repositories/applications.js";
import { UsageError, type Command, type Options } from "./output.js";
import { deploymentCommands } from "./deployment-commands.js";
import { restoreCommands } from "./restore-commands.js";
import { identityProviderCommands } from "./identity-provider-commands.js";
import { importCommands } from "./import-commands.js";
import { organisationRegisterCommands } from "./organisation-register-command.js";


function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}

function optional(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === "string" ? value : undefined;
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** Reads a batch file, refusing one larger than the web form accepts before reading it all. */
async function readBatchFileBytes(path: string): Promise<Buffer> {
  let file;
  try {
    file = await open(path, "r");
  } catch (error) {
    throw new AccountError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const { size } = await file.stat();
    if (size > batchFileMaxBytes) throw new BatchFileError(`The file is larger than ${batchFileMaxBytes / 1024} KiB; split it into smaller files`, 413);
    return await file.readFile();
  } catch (error) {
    if (error instanceof AccountError) throw error;
    throw new AccountError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  } finally {
    await file.close();
  }
}

/** The text of an import file, refusing one too large or unreadable with a plain message. */
async function readImportFile(file: string): Promise<string> {
  try {
    if ((await stat(file)).size > maxImportBytes) throw new AccountError(`${file} is larger than ${maxImportBytes / 1024 / 1024} MiB`);
    return await readFile(file, "utf8");
  } catch (error) {
    if (error instanceof AccountError) throw error;
    throw new AccountError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
}

/** The OpenID Connect options of `apps create` and `apps oidc`. */
const openIdOptions = {
  "oidc-scopes": { type: "string" },
  "no-oidc": { type: "boolean" },
  "id-token-alg": { type: "string" },
  "post-logout-redirect-uri": { type: "string", multiple: true },
  "no-post-logout-redirect-uris": { type: "boolean" },
  "backchannel-logout-uri": { type: "string" },
  "no-backchannel-logout": { type: "boolean" },
} as const;

/** Whether any OpenID Connect option was given. */
function openIdOptionsGiven(options: Options): boolean {
  return Object.keys(openIdOptions).some((name) => options[name] !== undefined);
}

/** The application's OpenID Connect registration with the options applied. */
function openIdSettingsFrom(options: Options, current: OpenIdClientSettings): OpenIdClientSettings {
  const both = (name: string, none: string) => {
    if (options[none] === true && options[name] !== undefined) throw new UsageError(`Use --${name} or --${none}, not both`);
  };
  both("oidc-scopes", "no-oidc");
  both("post-logout-redirect-uri", "no-post-logout-redirect-uris");
  both("backchannel-logout-uri", "no-backchannel-logout");
  const scopes = optional(options, "oidc-scopes");
  const postLogout = options["post-logout-redirect-uri"] as string[] | undefined;
  return {
    scopes: options["no-oidc"] === true ? [] : scopes === undefined ? current.scopes : list(scopes),
    idTokenAlg: optional(options, "id-token-alg") ?? current.idTokenAlg,
    postLogoutRedirectUris: options["no-post-logout-redirect-uris"] === true ? [] : (postLogout ?? current.postLogoutRedirectUris),
    backchannelLogoutUri: options["no-backchannel-logout"] === true ? null : (optional(options, "backchannel-logout-uri") ?? current.backchannelLogoutUri),
  };
}

async function applyOpenIdOptions(ctx: SignonContext, application: Application, options: Options): Promise<Application> {
  try {
    return await setOpenIdSettings(ctx, application, openIdSettingsFrom(options, openIdSettingsOf(application)), { uid: null, origin: null });
  } catch (error) {
    if (error instanceof OpenIdSettingsError) throw new AccountError(error.message);
    throw error;
  }
}

function openIdJson(application: Application) {
  return {
    oidc_scopes: application.oidcScopes,
    id_token_signed_response_alg: application.idTokenSignedResponseAlg,
    post_logout_redirect_uris: application.postLogoutRedirectUris,
    backchannel_logout_uri: application.backchannelLogoutUri,
  };
}

export const commands: Record<string, Command> = {
  "bootstrap first-start": firstStartCommand,

  "apps create": {
    usage:
      "signon apps create --name NAME --redirect-uri URI [--redirect-uri URI …] [--home-uri URI] [--push-base URL] [--permissions a,b] [--require-pkce] [--oidc-scopes openid,profile,email] [--id-token-alg ES256|RS256] [--post-logout-redirect-uri URI …] [--backchannel-logout-uri URI] [--json]",
    options: {
      name: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
      "home-uri": { type: "string" },
      "push-base": { type: "string" },
      permissions: { type: "string" },
      "require-pkce": { type: "boolean" },
      ...openIdOptions,
    },
    async run(ctx, options) {
      const redirectUris = (options["redirect-uri"] as string[] | undefined) ?? [];
      if (redirectUris.length === 0) throw new UsageError("--redirect-uri is required");
      // Checked before anything is registered, so a bad option leaves nothing behind.
      const settings = openIdSettingsFrom(options, { scopes: [], idTokenAlg: "ES256", postLogoutRedirectUris: [], backchannelLogoutUri: null });
      try {
        checkOpenIdSettings(ctx, settings);
      } catch (error) {
        if (error instanceof OpenIdSettingsError) throw new AccountError(error.message);
        throw error;
      }
      const registered = await registerApplication(ctx, {
        name: required(options, "name"),
        redirectUris,
        homeUri: optional(options, "home-uri"),
        pushBaseUrl: optional(options, "push-base"),
        permissions: list(optional(options, "permissions")),
        requirePkce: options["require-pkce"] === true,
      });
      const { clientSecret } = registered;
      const application = openIdOptionsGiven(options) ? await applyOpenIdOptions(ctx, registered.application, options) : registered.application;
      return {
        json: {
          name: application.name,
          client_id: application.clientId,
          client_secret: clientSecret,
          redirect_uris: application.redirectUris,
          permissions: application.supportedPermissions,
          ...(application.oidcScopes.length > 0 ? openIdJson(application) : {}),
        },
        text: [
          `Registered ${application.name}.`,
          `client_id:     ${application.clientId}`,
          `client_secret: ${clientSecret}`,
          "The secret is shown only now: put it in the application's private configuration.",
        ],
      };
    },
  },

  "apps update": {
    usage:
      "signon apps update --app NAME [--name NEW_NAME] [--api-only yes|no] [--pushes on|off] [--default-permissions a,b | --no-default-permissions] [--not-grantable-in-ui a,b | --all-grantable-in-ui] [--json]",
    options: {
      app: { type: "string" },
      name: { type: "string" },
      "api-only": { type: "string" },
      pushes: { type: "string" },
      "default-permissions": { type: "string" },
      "no-default-permissions": { type: "boolean" },
      "not-grantable-in-ui": { type: "string" },
      "all-grantable-in-ui": { type: "boolean" },
    },
    async run(ctx, options) {
      const application = await requireApplication(ctx, required(options, "app"));
      const choice = (name: string, yes: string, no: string): boolean | undefined => {
        const value = optional(options, name);
        if (value === undefined) return undefined;
        if (value !== yes && value !== no) throw new UsageError(`--${name} is ${yes} or ${no}`);
        return value === yes;
      };
      const apiOnly = choice("api-only", "yes", "no");
      const pushEnabled = choice("pushes", "on", "off");
      const listOption = (name: string, none: string, current: string[]): string[] => {
        if (options[none] === true && options[name] !== undefined) throw new UsageError(`Use --${name} or --${none}, not both`);
        if (options[none] === true) return [];
        const value = optional(options, name);
        return value === undefined ? current : list(value);
      };
      const current = applicationFormValues(application);
      const checked = checkApplicationForm(
        {
          ...current,
          name: optional(options, "name") ?? application.name,
          default_permissions: listOption("default-permissions", "no-default-permissions", application.defaultPermissions).join(","),
          permissions_not_grantable_in_ui: listOption("not-grantable-in-ui", "all-grantable-in-ui", application.permissionsNotGrantableInUi).join(","),
          api_only: (apiOnly ?? application.apiOnly) ? "yes" : "",
          push_enabled: (pushEnabled ?? application.pushEnabled) ? "yes" : "no",
        },
        ctx.config,
        application.supportedPermissions,
      );
      if (!checked.ok) throw new AccountError(Object.values(checked.errors).join("; "));
      let update;
      try {
        update = await updateApplication(ctx, application.id, checked.settings, { uid: null, origin: null });
      } catch (error) {
        if (error instanceof ApplicationNameTaken) throw new AccountError(error.message);
        throw error;
      }
      if (!update) throw new AccountError(`No application is named ${application.name}`);
      const updated = update.application;
      return {
        json: {
          name: updated.name,
          api_only: updated.apiOnly,
          pushes: updated.pushEnabled ? "on" : "off",
          default_permissions: updated.defaultPermissions,
          not_grantable_in_ui: updated.permissionsNotGrantableInUi,
          changed: update.changed,
        },
        text: [update.changed.length === 0 ? `Nothing changed on ${updated.name}.` : `Updated ${updated.name}: ${update.changed.join(", ")}.`],
      };
    },
  },

  "apps show": {
    usage: "signon apps show --app NAME [--json]",
    options: { app: { type: "string" } },
    async run(ctx, options) {
      const application = await requireApplication(ctx, required(options, "app"));
      // The base pushes go to: as registered, else the origin of the first redirect URI (S13).
      const pushBase = pushBaseOf(application.pushBaseUrl, application.redirectUris);
      const pushes = application.pushEnabled ? "on" : "off";
      return {
        json: {
          name: application.name,
          client_id: application.clientId,
          redirect_uris: application.redirectUris,
          permissions: application.supportedPermissions,
          delegatable_permissions: application.delegatablePermissions,
          push_base: pushBase,
          push_base_registered: application.pushBaseUrl !== null && application.pushBaseUrl !== "",
          pushes,
          retired: application.retired,
        },
        text: [
          `${application.name}${application.retired ? " (retired)" : ""}`,
          `client_id:     ${application.clientId}`,
          `redirect URIs: ${application.redirectUris.join(" ")}`,
          `permissions:   ${application.supportedPermissions.join(", ")}`,
          `delegatable:   ${application.delegatablePermissions.join(", ") || "none"}`,
          `push base:     ${pushBase}${application.pushBaseUrl ? "" : " (the origin of the first redirect URI)"}; pushes ${pushes}`,
        ],
      };
    },
  },

  "apps oidc": {
    usage:
      "signon apps oidc --app NAME [--oidc-scopes openid,profile,email | --no-oidc] [--id-token-alg ES256|RS256] [--post-logout-redirect-uri URI … | --no-post-logout-redirect-uris] [--backchannel-logout-uri URI | --no-backchannel-logout] [--json]",
    options: { app: { type: "string" }, ...openIdOptions },
    async run(ctx, options) {
      const application = await requireApplication(ctx, required(options, "app"));
      const updated = openIdOptionsGiven(options) ? await applyOpenIdOptions(ctx, application, options) : application;
      const settings = openIdJson(updated);
      return {
        json: { name: updated.name, client_id: updated.clientId, ...settings },
        text: [
          updated.oidcScopes.length === 0 ? `${updated.name} is not an OpenID Connect client.` : `${updated.name}: OpenID Connect scopes ${updated.oidcScopes.join(" ")}, ID tokens ${updated.idTokenSignedResponseAlg}.`,
          `post-logout redirect URIs: ${updated.postLogoutRedirectUris.join(" ") || "none"}`,
          `back-channel logout URI:   ${updated.backchannelLogoutUri ?? "none"}`,
        ],
      };
    },
  },

  "keys rotate": {
    usage: "signon keys rotate [--json]",
    options: {},
    async run(ctx) {
      // The server's key (configured, or the development key file of the data directory) seals the new keys.
      const keys = await rotateSigningKeys({ ...ctx, secretKey: await resolveSecretKey(ctx.config.secretKey, ctx.config.dataDir) }, "command");
      return {
        json: { keys },
        text: [
          `New signing keys: ${keys.map((key) => `${key.alg} ${key.kid}`).join(", ")}.`,
          "The previous keys stay published until the ID tokens they signed have expired; running servers sign with the new keys within a minute.",
        ],
      };
    },
  },

  "apps usage": {
    usage: "signon apps usage NAME [--json]",
    options: {},
    positionals: ["name"],
    async run(ctx, options) {
      const application = await requireApplication(ctx, required(options, "name"));
      const [months, recent] = await Promise.all([applicationMonthlyUsers(ctx, application.id), applicationSignIns(ctx, application.id, { limit: 20 })]);
      return {
        json: {
          name: application.name,
          monthly_unique_users: months.map((month) => ({ month: month.month, users: month.users, sign_ins: month.signIns })),
          recent_sign_ins: recent.map((signIn) => ({ at: signIn.at.toISOString(), uid: signIn.uid, email: signIn.email })),
        },
        text: [
          `${application.name}: unique users per month (UTC), newest first`,
          ...months.map((month) => `${month.month}\t${month.users} users\t${month.signIns} sign-ins`),
          ...(recent.length === 0 ? ["Nobody has signed in yet."] : ["Latest sign-ins:", ...recent.map((signIn) => `${signIn.at.toISOString()}\t${signIn.email ?? "(deleted account)"}`)]),
        ],
      };
    },
  },

  "users create": {
    usage: "signon users create --email E --name N [--role ROLE] [--organisation SLUG] [--password P | --generate-password] [--json]",
    options: {
      email: { type: "string" },
      name: { type: "string" },
      role: { type: "string" },
      organisation: { type: "string" },
      password: { type: "string" },
      "generate-password": { type: "boolean" },
    },
    async run(ctx, options) {
      const role = optional(options, "role") ?? "normal";
      if (!roles.includes(role as Role)) throw new UsageError(`--role must be one of ${roles.join(", ")}`);
      if (options.password !== undefined && options["generate-password"]) throw new UsageError("Use --password or --generate-password, not both");
      const email = required(options, "email");
      const name = required(options, "name");
      // Held to the web's password policy by createUser, a given password and a generated one alike.
      const generated = options["generate-password"] === true ? await generatePassword(ctx, { email: email.trim(), name: name.trim() }) : undefined;
      const password = generated ?? optional(options, "password");
      const slug = optional(options, "organisation");
      const organisation = slug === undefined ? undefined : await requireOrganisation(ctx, slug);
      const user = await createUser(ctx, {
        email,
        name,
        role: role as Role,
        password,
        organisationId: organisation?.id,
      });
      const json: Record<string, unknown> = { uid: user.uid, email: user.email, name: user.name, role: user.role, organisation: organisation?.slug ?? null };
      if (generated) json.password = generated;
      return {
        json,
        text: [
          `Created ${user.email} (${user.role}), uid ${user.uid}.`,
          ...(generated ? [`Password: ${generated}`, "The password is shown only now."] : []),
          ...(password === undefined ? ["No password set: this user cannot sign in yet."] : []),
        ],
      };
    },
  },

  "organisations create": {
    usage: "signon organisations create --slug SLUG --name NAME [--content-id UUID] [--json]",
    options: { slug: { type: "string" }, name: { type: "string" }, "content-id": { type: "string" } },
    async run(ctx, options) {
      const organisation = await createOrganisation(ctx, {
        slug: required(options, "slug"),
        name: required(options, "name"),
        contentId: optional(options, "content-id"),
      });
      return {
        json: { slug: organisation.slug, name: organisation.name, content_id: organisation.contentId },
        text: [`Created organisation ${organisation.slug} (content id ${organisation.contentId}).`],
      };
    },
  },

  "users invite-batch": {
    usage: "signon users invite-batch FILE [--role ROLE] [--organisation SLUG-OR-NAME] [--permission APP:PERMISSION …] [--json]",
    options: { role: { type: "string" }, organisation: { type: "string" }, permission: { type: "string", multiple: true } },
    positionals: ["file"],
    async run(ctx, options) {
      const role = optional(options, "role") ?? "normal";
      if (!roles.includes(role as Role)) throw new UsageError(`--role must be one of ${roles.join(", ")}`);
      const rows = readBatchFile(await readBatchFileBytes(required(options, "file")));
      const organisationName = optional(options, "organisation");
      const organisationId = organisationName === undefined ? null : await findOrganisationIdBySlugOrName(ctx.db, organisationName);
      if (organisationName !== undefined && organisationId === null) throw new AccountError(`No organisation has the slug or name ${organisationName}`);
      const permissions: string[] = [];
      for (const given of (options.permission as string[] | undefined) ?? []) {
        const at = given.lastIndexOf(":");
        if (at <= 0 || at === given.length - 1) throw new UsageError("--permission is APPLICATION:PERMISSION, for example --permission Publisher:editor");
        const application = await requireApplication(ctx, given.slice(0, at));
        permissions.push(`${application.id}:${given.slice(at + 1)}`);
      }
      const batchId = await startInvitationBatch(ctx, null, { role: role as Role, organisationId, permissions }, rows, null);
      // Rows a running server's batch job took meanwhile are waited for, a minute at most.
      for (let waited = 0; ; waited += 250) {
        await processInvitationBatches(ctx, { batchId });
        if ((await countBatchOutcomes(ctx.db, batchId)).pending === 0 || waited >= 60_000) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const outcomes = await listInvitationBatchRows(ctx.db, batchId);
      const counts = await countBatchOutcomes(ctx.db, batchId);
      return {
        json: {
          batch_id: batchId,
          counts,
          rows: outcomes.map((row) => ({ line: row.line, name: row.name, email: row.email, outcome: row.outcome, reason: row.reason })),
        },
        text: [
          ...outcomes.map((row) => `line ${row.line}\t${row.outcome}\t${row.email}${row.reason ? `\t${row.reason}` : ""}`),
          `${counts.invited} invited, ${counts.exists} already had an account, ${counts.invalid} not valid, of ${outcomes.length}.`,
        ],
      };
    },
  },

  "organisations import": {
    usage: "signon organisations import FILE [--dry-run] [--json]   (CSV with columns slug,name[,parent_slug][,closed][,content_id], or JSON)",
    options: { "dry-run": { type: "boolean" } },
    positionals: ["file"],
    async run(ctx, options) {
      const file = required(options, "file");
      const text = await readImportFile(file);
      const { rows, unreadable } = readOrganisationImportFile(text, file.toLowerCase().endsWith(".json") ? "json" : file.toLowerCase().endsWith(".csv") ? "csv" : "auto");
      const dryRun = options["dry-run"] === true;
      const results = await importOrganisations(ctx, rows, unreadable, { dryRun });
      const counts = { created: 0, updated: 0, unchanged: 0, invalid: 0 };
      for (const result of results) counts[result.outcome] += 1;
      return {
        json: { dry_run: dryRun, counts, rows: results.map((result) => ({ row: result.row, slug: result.slug, outcome: result.outcome, ...(result.message ? { message: result.message } : {}) })) },
        text: [
          ...results.map((result) => `row ${result.row}\t${result.outcome}\t${result.slug ?? "-"}${result.message ? `\t${result.message}` : ""}`),
          `${dryRun ? "Dry run, nothing was saved: would have " : ""}${dryRun ? "created" : "Created"} ${counts.created}, updated ${counts.updated}, left ${counts.unchanged} unchanged; ${counts.invalid} invalid.`,
        ],
        exitCode: counts.invalid > 0 ? 1 : 0,
      };
    },
  },

  ...organisationRegisterCommands,

  "users suspend": {
    usage: "signon users suspend --email E --reason TEXT [--json]",
    options: { email: { type: "string" }, reason: { type: "string" } },
    async run(ctx, options) {
      const user = await suspendUser(ctx, required(options, "email"), required(options, "reason"));
      return {
        json: { uid: user.uid, email: user.email, suspended: true, reason: user.suspensionReason },
        text: [`Suspended ${user.email}: their sessions ended and their tokens were revoked.`],
      };
    },
  },

  "users unsuspend": {
    usage: "signon users unsuspend --email E [--json]",
    options: { email: { type: "string" } },
    async run(ctx, options) {
      const user = await unsuspendUser(ctx, required(options, "email"));
      return { json: { uid: user.uid, email: user.email, suspended: false }, text: [`Unsuspended ${user.email}.`] };
    },
  },

  "users update": {
    usage: "signon users update --email E [--name N] [--new-email E] [--organisation SLUG | --no-organisation] [--json]",
    options: { email: { type: "string" }, name: { type: "string" }, "new-email": { type: "string" }, organisation: { type: "string" }, "no-organisation": { type: "boolean" } },
    async run(ctx, options) {
      const slug = optional(options, "organisation");
      if (slug !== undefined && options["no-organisation"] === true) throw new UsageError("Use --organisation or --no-organisation, not both");
      const organisation = slug === undefined ? undefined : await requireOrganisation(ctx, slug);
      const user = await updateUserDetails(ctx, required(options, "email"), {
        name: optional(options, "name"),
        email: optional(options, "new-email"),
        organisationId: options["no-organisation"] === true ? null : organisation?.id,
      });
      return { json: { uid: user.uid, email: user.email, name: user.name }, text: [`Updated ${user.email}; its applications are told.`] };
    },
  },

  "users suspend-inactive": {
    usage: "signon users suspend-inactive [--json]",
    options: {},
    async run(ctx) {
      const suspended = await suspendInactiveUsers(ctx);
      const days = ctx.config.inactivityDays;
      return {
        json: { days, suspended },
        text: suspended.length === 0 ? [`Nobody has gone ${days} days without signing in.`] : suspended.map((email) => `Suspended ${email}: not signed in for ${days} days.`),
      };
    },
  },

  "users unlock": {
    usage: "signon users unlock --email E [--json]",
    options: { email: { type: "string" } },
    async run(ctx, options) {
      const user = await unlockUser(ctx, required(options, "email"));
      return { json: { uid: user.uid, email: user.email, locked: false }, text: [`Unlocked ${user.email}: the lock is lifted and its failed sign-ins are forgotten, so every address may try again.`] };
    },
  },

  "permissions grant": {
    usage: "signon permissions grant --email E --app NAME --permissions signin,admin [--json]",
    options: { email: { type: "string" }, app: { type: "string" }, permissions: { type: "string" } },
    async run(ctx, options) {
      const permissions = list(required(options, "permissions"));
      const held = await grantPermissions(ctx, { email: required(options, "email"), application: required(options, "app"), permissions });
      return { json: { email: options.email, app: options.app, permissions: held }, text: [`${String(options.email)} now holds on ${String(options.app)}: ${held.join(", ") || "nothing"}`] };
    },
  },

  "permissions revoke": {
    usage: "signon permissions revoke --email E --app NAME --permissions signin,admin [--json]",
    options: { email: { type: "string" }, app: { type: "string" }, permissions: { type: "string" } },
    async run(ctx, options) {
      const permissions = list(required(options, "permissions"));
      const held = await revokePermissions(ctx, { email: required(options, "email"), application: required(options, "app"), permissions });
      return { json: { email: options.email, app: options.app, permissions: held }, text: [`${String(options.email)} now holds on ${String(options.app)}: ${held.join(", ") || "nothing"}`] };
    },
  },

  "api-users create": {
    usage: "signon api-users create --name N --email E [--json]",
    options: { name: { type: "string" }, email: { type: "string" } },
    async run(ctx, options) {
      const user = await createApiUser(ctx, { email: required(options, "email"), name: required(options, "name") });
      return {
        json: { uid: user.uid, email: user.email, name: user.name, api_user: true },
        text: [`Created API user ${user.email}, uid ${user.uid}.`, "Next: grant it signin on an application, then `signon tokens issue`."],
      };
    },
  },

  "api-users auto-renewal": {
    usage: "signon api-users auto-renewal --email E --on | --off [--json]",
    options: { email: { type: "string" }, on: { type: "boolean" }, off: { type: "boolean" } },
    async run(ctx, options) {
      if ((options.on === true) === (options.off === true)) throw new UsageError("Give --on or --off");
      const user = await requireUserByEmail(ctx, required(options, "email"));
      if (!user.isApiUser) throw new AccountError(`${user.email} is not an API user`);
      const updated = await setTokenAutoRenewal(ctx, user, options.on === true, { uid: null, origin: null });
      return {
        json: { email: updated.email, token_auto_renewal: updated.tokenAutoRenewal },
        text: [`Automatic token renewal of ${updated.email} is ${updated.tokenAutoRenewal ? "on" : "off"}.`],
      };
    },
  },

  "tokens renew-expiring": {
    usage: "signon tokens renew-expiring [--json]",
    options: {},
    async run(ctx) {
      // The server's key (configured, or the development key file of the data directory) seals the new tokens.
      const renewed = await renewExpiringApiTokens({ ...ctx, secretKey: await resolveSecretKey(ctx.config.secretKey, ctx.config.dataDir) });
      return {
        json: { renewed },
        text: [`Renewed ${renewed} API token(s); ${renewalRuleText}. The new tokens are shown on the API users' pages, not here.`],
      };
    },
  },

  "tokens issue": {
    usage: "signon tokens issue --email E --app NAME [--expires-in SECONDS] [--json]",
    options: { email: { type: "string" }, app: { type: "string" }, "expires-in": { type: "string" } },
    async run(ctx, options) {
      const rawExpiry = optional(options, "expires-in");
      if (rawExpiry !== undefined && !/^\d+$/.test(rawExpiry)) throw new UsageError("--expires-in is a whole number of seconds");
      const issued = await issueOperatorToken(ctx, {
        email: required(options, "email"),
        application: required(options, "app"),
        expiresInSeconds: rawExpiry === undefined ? undefined : Number(rawExpiry),
      });
      return {
        json: { access_token: issued.accessToken, token_type: "Bearer", expires_at: issued.expiresAt.toISOString(), uid: issued.userUid },
        text: [`Bearer token: ${issued.accessToken}`, `Expires ${issued.expiresAt.toISOString()}. Shown only now.`],
      };
    },
  },

  "pushes list": {
    usage: "signon pushes list [--status pending|failed|delivered] [--json]",
    options: { status: { type: "string" } },
    async run(ctx, options) {
      const status = optional(options, "status");
      if (status !== undefined && !["pending", "failed", "delivered"].includes(status)) throw new UsageError("--status is pending, failed or delivered");
      const pushes = await listPushes(ctx.db, { status: status as PushStatus | undefined });
      return {
        json: { pushes },
        text:
          pushes.length === 0
            ? ["No pushes."]
            : pushes.map(
                (push) =>
                  `${push.id}\t${push.status}\t${push.kind}\t${push.email} -> ${push.application}\tattempts ${push.attempts}` +
                  (push.next_attempt_at ? `\tnext ${push.next_attempt_at}` : "") +
                  (push.last_error ? `\t${push.last_error}` : ""),
              ),
      };
    },
  },

  "pushes retry": {
    usage: "signon pushes retry ID [--json]",
    options: {},
    positionals: ["id"],
    async run(ctx, options) {
      const raw = required(options, "id");
      if (!/^\d{1,15}$/.test(raw)) throw new UsageError("ID is the number `signon pushes list` shows");
      if (!(await retryPush(ctx.db, Number(raw), ctx.now()))) throw new AccountError(`No push has id ${raw}`);
      return { json: { id: Number(raw), status: "pending" }, text: [`Push ${raw} is due again now.`] };
    },
  },

  ...deploymentCommands,
  ...restoreCommands,
  ...importCommands,
  ...identityProviderCommands,
};
