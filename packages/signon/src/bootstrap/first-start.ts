import { rm } from "node:fs/promises";
import { createApiUser, createUser } from "../accounts/manage-users.js";
import { generatePassword } from "../accounts/password-policy.js";
import { registerApplication } from "../applications/register-application.js";
import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { issueOperatorToken } from "../oauth/issue-operator-token.js";
import { addPermissions } from "../repositories/permissions.js";
import { writeCredentialsFile } from "./credentials-file.js";
import { claimFirstStart, readFirstStart, recordCompletionClientId } from "./marker.js";

/** Names the first start gives what it creates; the other services and the README rely on them. */
export const FIRST_START_NAMES = {
  completionApp: "completion",
  exampleApp: "Editorial app",
  apiClientName: "Demo API client",
  apiClientEmail: "demo-api-client@example.com",
} as const;

/** Permissions the first start registers and grants. */
export const FIRST_START_PERMISSIONS = {
  /** Supported by the `completion` application (`signin` always is). */
  completionApp: ["staff", "masquerade", "admin"],
  /** Supported by the example application. */
  exampleApp: ["editor", "admin"],
  /** Held by the superadmin on both applications. */
  admin: ["signin", "admin"],
  /** Held by the demo API client on `completion`: read anyone's data, record progress, import. */
  apiClient: ["signin", "staff", "admin"],
} as const;

/** Where the first start points things. */
export interface FirstStartOptions {
  /** The superadmin's e-mail address (default `admin@example.com`). */
  adminEmail?: string | undefined;
  /** The superadmin's name (default `Administrator`). */
  adminName?: string | undefined;
  /** Origin of the Completion service (default `http://127.0.0.1:3001`); it receives pushes under `/auth/gds/api`. */
  completionUrl?: string | undefined;
  /** Origin of the example application (default `http://127.0.0.1:3002`). */
  exampleAppUrl?: string | undefined;
  /** Where the example application's credentials go (JSON, mode 0600). */
  credentialsFile: string;
}

/** What a first start created. The password and tokens exist only here: the database keeps their hashes. */
export interface FirstStartCreated {
  status: "created";
  admin: { email: string; uid: string; password: string };
  completionApp: { name: string; clientId: string };
  exampleApp: { name: string; clientId: string; credentialsFile: string };
  apiClient: { name: string; email: string; uid: string; token: string; expiresAt: string };
}

/** The answer when the first start had run before: nothing was changed. */
export interface FirstStartDoneBefore {
  status: "done-before";
  completedAt: string;
  adminEmail: string;
  completionClientId?: string;
}

/** The outcome of {@link runFirstStart}. */
export type FirstStartResult = FirstStartCreated | FirstStartDoneBefore;

const DEFAULT_ADMIN_EMAIL = "admin@example.com";

function origin(value: string | undefined, fallback: string): string {
  return (value ?? fallback).replace(/\/+$/, "");
}

/**
 * A grant of the set-up itself, audited like any other but without a push
 * (S13): the people it is made for are new, no application has heard of them
 * yet, and each learns of them at their first sign-in or token check. So a
 * first start queues no pushes at all.
 */
async function grantAtSetUp(ctx: SignonContext, userUid: string, applicationId: string, permissions: readonly string[]): Promise<void> {
  const now = ctx.now();
  const added = await addPermissions(ctx.db, userUid, applicationId, permissions, now);
  await audit(ctx.db, { action: "permissions_granted", at: now, actorUid: null, subjectUid: userUid, applicationId, origin: null, details: { permissions: added } });
}

/**
 * The first-start set-up of a new installation, run once: creates a
 * superadmin with a random password; registers the `completion` application
 * and the example application (callback, home page, push receivers at
 * `/auth/gds/api` of each); grants the superadmin `signin` and `admin` on
 * both; creates the API user "Demo API client" holding `signin`, `staff` and
 * `admin` on `completion` and issues it a token; writes the example
 * application's credentials file. It queues no pushes. All of it
 * happens in one transaction that also inserts the `first_start` row of
 * `signon.settings`, so it happens entirely or not at all, and a later run
 * (or a concurrent one) finds the row and changes nothing.
 */
export async function runFirstStart(ctx: SignonContext, options: FirstStartOptions): Promise<FirstStartResult> {
  const before = await readFirstStart(ctx.db);
  if (before !== null) return { status: "done-before", ...before };

  const adminEmail = (options.adminEmail ?? DEFAULT_ADMIN_EMAIL).trim();
  const completionUrl = origin(options.completionUrl, "http://127.0.0.1:3001");
  const exampleUrl = origin(options.exampleAppUrl, "http://127.0.0.1:3002");
  const adminName = options.adminName ?? "Administrator";
  // Random, and held to the same policy as any password (createUser checks it again).
  const password = await generatePassword(ctx, { email: adminEmail, name: adminName.trim() });
  let wroteCredentials = false;
  try {
    const result = await ctx.db.transaction(async (tx): Promise<FirstStartResult> => {
      if (!(await claimFirstStart(tx, { completedAt: ctx.now().toISOString(), adminEmail }, ctx.now()))) {
        const marker = await readFirstStart(tx);
        return { status: "done-before", completedAt: marker?.completedAt ?? "", adminEmail: marker?.adminEmail ?? "", ...(marker?.completionClientId ? { completionClientId: marker.completionClientId } : {}) };
      }
      // Every step below runs in this transaction (theirs become savepoints); none of them queues a push.
      const inTx: SignonContext = { ...ctx, db: tx, pushesQueued: undefined };
      const admin = await createUser(inTx, { email: adminEmail, name: adminName, role: "superadmin", password });
      const completion = await registerApplication(inTx, {
        name: FIRST_START_NAMES.completionApp,
        redirectUris: [`${completionUrl}/`],
        homeUri: `${completionUrl}/api/completion/v1/openapi.json`,
        pushBaseUrl: `${completionUrl}/auth/gds/api`,
        permissions: FIRST_START_PERMISSIONS.completionApp,
      });
      await recordCompletionClientId(tx, completion.application.clientId, ctx.now());
      const example = await registerApplication(inTx, {
        name: FIRST_START_NAMES.exampleApp,
        redirectUris: [`${exampleUrl}/auth/gds/callback`],
        homeUri: `${exampleUrl}/`,
        pushBaseUrl: `${exampleUrl}/auth/gds/api`,
        permissions: FIRST_START_PERMISSIONS.exampleApp,
      });
      for (const application of [completion.application, example.application]) {
        await grantAtSetUp(inTx, admin.uid, application.id, FIRST_START_PERMISSIONS.admin);
      }
      const apiUser = await createApiUser(inTx, { email: FIRST_START_NAMES.apiClientEmail, name: FIRST_START_NAMES.apiClientName });
      await grantAtSetUp(inTx, apiUser.uid, completion.application.id, FIRST_START_PERMISSIONS.apiClient);
      const token = await issueOperatorToken(inTx, { email: apiUser.email, application: FIRST_START_NAMES.completionApp });

      await writeCredentialsFile(options.credentialsFile, {
        name: example.application.name,
        client_id: example.application.clientId,
        client_secret: example.clientSecret,
        redirect_uris: example.application.redirectUris,
        permissions: example.application.supportedPermissions,
      });
      wroteCredentials = true;
      return {
        status: "created",
        admin: { email: admin.email, uid: admin.uid, password },
        completionApp: { name: completion.application.name, clientId: completion.application.clientId },
        exampleApp: { name: example.application.name, clientId: example.application.clientId, credentialsFile: options.credentialsFile },
        apiClient: { name: apiUser.name, email: apiUser.email, uid: apiUser.uid, token: token.accessToken, expiresAt: token.expiresAt.toISOString() },
      };
    });
    return result;
  } catch (error) {
    // Nothing was kept in the database, so the credentials written for it are worthless.
    if (wroteCredentials) await rm(options.credentialsFile, { force: true });
    throw error;
  }
}
