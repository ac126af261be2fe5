import { eq } from "drizzle-orm";
import { createUser as createPerson, type NewPerson } from "../../src/accounts/manage-users.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { registerApplication, type ApplicationRegistration } from "../../src/applications/register-application.js";
import type { SignonContext } from "../../src/context.js";
import { users } from "../../src/db/schema.js";

let counter = 0;
const next = () => ++counter;

export const defaultPassword = "correct horse battery staple";

/** Registers an application; returns it with its client id and secret. */
export async function createApp(ctx: SignonContext, overrides: Partial<ApplicationRegistration> = {}) {
  const n = next();
  const { application, clientSecret } = await registerApplication(ctx, {
    name: `App ${n}`,
    redirectUris: [`https://app${n}.example/auth/callback`],
    permissions: ["admin"],
    ...overrides,
  });
  return { application, clientId: application.clientId, clientSecret, redirectUri: application.redirectUris[0] as string };
}

/** Creates a person with a password and, optionally, permissions on applications. */
export async function createUser(
  ctx: SignonContext,
  options: Partial<NewPerson> & { permissions?: Record<string, string[]> } = {},
) {
  const n = next();
  const { permissions = {}, ...person } = options;
  const user = await createPerson(ctx, { email: `user${n}@example.org`, name: `User ${n}`, password: defaultPassword, ...person });
  for (const [application, names] of Object.entries(permissions)) {
    await grantPermissions(ctx, { email: user.email, application, permissions: names });
  }
  return user;
}

/** Locks an account as 30 failed sign-ins would (S15), without the mail: for tests of what a lock changes. */
export async function lockUser(ctx: SignonContext, uid: string, at: Date = ctx.now()): Promise<void> {
  await ctx.db.update(users).set({ lockedAt: at }).where(eq(users.uid, uid));
}
