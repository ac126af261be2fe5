import { randomUUID } from "node:crypto";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { redirectUriProblem } from "../oauth/redirect-uri.js";
import { findApplicationByName, insertApplication, type Application } from "../repositories/applications.js";
import { randomHex, sha256Hex } from "../security/random.js";

export interface ApplicationRegistration {
  name: string;
  redirectUris: readonly string[];
  homeUri?: string | undefined;
  pushBaseUrl?: string | undefined;
  /** Permissions beyond `signin`, which is always supported. */
  permissions?: readonly string[] | undefined;
  requirePkce?: boolean | undefined;
  /** Permissions organisation admins may grant: a subset of the supported ones. */
  delegatablePermissions?: readonly string[] | undefined;
  /** Permissions granted to every new person: a subset of the supported ones. */
  defaultPermissions?: readonly string[] | undefined;
  /** Permissions the web interface's grids do not offer: a subset of the supported ones. */
  permissionsNotGrantableInUi?: readonly string[] | undefined;
  apiOnly?: boolean | undefined;
  pushEnabled?: boolean | undefined;
}

/** A refused registration, with a message for the operator. */
export class RegistrationError extends Error {}

/** What a permission name looks like. */
export const permissionPattern = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Registers a client application and returns it with its client secret,
 * which exists only in this return value: the database keeps its SHA-256
 * digest (S5). `origin`: where the request came from, for the audit event
 * (none from the command line).
 */
export async function registerApplication(
  ctx: SignonContext,
  registration: ApplicationRegistration,
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
): Promise<{ application: Application; clientSecret: string }> {
  const name = registration.name.trim();
  if (name === "" || name.length > 200) throw new RegistrationError("The application needs a name of 1 to 200 characters");
  if (registration.redirectUris.length === 0) throw new RegistrationError("The application needs at least one redirect URI");
  const allowLoopbackHttp = ctx.config.mode === "development";
  for (const uri of registration.redirectUris) {
    const problem = redirectUriProblem(uri, { allowLoopbackHttp });
    if (problem) throw new RegistrationError(`Redirect URI ${uri} ${problem}`);
  }
  for (const [label, uri] of [["Home URI", registration.homeUri], ["Push base URL", registration.pushBaseUrl]] as const) {
    if (uri === undefined) continue;
    const problem = redirectUriProblem(uri, { allowLoopbackHttp });
    if (problem) throw new RegistrationError(`${label} ${uri} ${problem}`);
  }
  const permissions = [...new Set(["signin", ...(registration.permissions ?? [])])].sort();
  const badPermission = permissions.find((permission) => !permissionPattern.test(permission));
  if (badPermission !== undefined) {
    throw new RegistrationError(`Permission names are lower-case letters, digits and underscores: ${JSON.stringify(badPermission)}`);
  }
  const delegatable = [...new Set(registration.delegatablePermissions ?? [])].sort();
  const notSupported = delegatable.find((permission) => !permissions.includes(permission));
  if (notSupported !== undefined) throw new RegistrationError(`Delegatable permission ${notSupported} is not a supported one`);
  const defaults = [...new Set(registration.defaultPermissions ?? [])].sort();
  const notGrantableInUi = [...new Set(registration.permissionsNotGrantableInUi ?? [])].sort();
  for (const [label, chosen] of [["Default", defaults], ["Not grantable in the web interface:", notGrantableInUi]] as const) {
    const unknown = chosen.find((permission) => !permissions.includes(permission));
    if (unknown !== undefined) throw new RegistrationError(`${label} permission ${unknown} is not a supported one`);
  }
  if (await findApplicationByName(ctx.db, name)) throw new RegistrationError(`An application named ${name} already exists`);

  const clientSecret = randomHex();
  const now = ctx.now();
  const application = await ctx.db.transaction(async (tx) => {
    const inserted = await insertApplication(tx, {
      id: randomUUID(),
      name,
      clientId: randomHex(),
      clientSecretHash: sha256Hex(clientSecret),
      redirectUris: [...registration.redirectUris],
      homeUri: registration.homeUri ?? null,
      pushBaseUrl: registration.pushBaseUrl ?? null,
      supportedPermissions: permissions,
      delegatablePermissions: delegatable,
      requirePkce: registration.requirePkce ?? false,
      defaultPermissions: defaults,
      permissionsNotGrantableInUi: notGrantableInUi,
      apiOnly: registration.apiOnly ?? false,
      pushEnabled: registration.pushEnabled ?? true,
      createdAt: now,
    });
    await audit(tx, { action: "application_created", at: now, actorUid, origin, applicationId: inserted.id, details: { name } });
    return inserted;
  });
  return { application, clientSecret };
}
