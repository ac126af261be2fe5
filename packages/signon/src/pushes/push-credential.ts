import { eq } from "drizzle-orm";
import { createApiUser } from "../accounts/manage-users.js";
import type { SignonContext } from "../context.js";
import { applications } from "../db/schema.js";
import { issueOperatorToken } from "../oauth/issue-operator-token.js";
import { addPermissions } from "../repositories/permissions.js";
import { findUserByEmail, type User } from "../repositories/users.js";

/** The e-mail address of Sign-on's own push API user (S13); `.invalid` never delivers mail (RFC 2606). */
export const pushUserEmail = "push@signon.invalid";

/** What the push user holds on every application it pushes to (S13). */
export const pushPermissions = ["signin", "user_update_permission"] as const;

/** Push tokens live a day and are renewed when less than an hour is left. */
const tokenLifetimeSeconds = 24 * 3600;
const renewBeforeSeconds = 3600;

/**
 * Sign-on's push credential (S13): the API user `push@signon.invalid`
 * holding `signin` and `user_update_permission` on each application it
 * pushes to, and one bearer token per application for it.
 *
 * Tokens are stored hashed (S5), so the raw token lives only here, in this
 * process's memory: each worker issues its own through the operator token
 * code path (`issueOperatorToken`, audited) the first time it pushes to an
 * application, and again before it expires. A restart or another instance
 * simply issues new ones; old ones run out after a day.
 */
export class PushCredential {
  private readonly tokens = new Map<string, { token: string; expiresAt: Date }>();
  private readonly issuing = new Map<string, Promise<string>>();
  private user: Promise<User> | undefined;

  constructor(private readonly ctx: SignonContext) {}

  /** A live bearer token of the push user on the application. */
  async tokenFor(applicationId: string): Promise<string> {
    const held = this.tokens.get(applicationId);
    if (held && held.expiresAt.getTime() - this.ctx.now().getTime() > renewBeforeSeconds * 1000) return held.token;
    let pending = this.issuing.get(applicationId);
    if (!pending) {
      pending = this.issue(applicationId).finally(() => this.issuing.delete(applicationId));
      this.issuing.set(applicationId, pending);
    }
    return pending;
  }

  /** Forgets the token of an application (the receiver refused it), so the next push issues a new one. */
  forget(applicationId: string): void {
    this.tokens.delete(applicationId);
  }

  private async issue(applicationId: string): Promise<string> {
    const user = await this.pushUser();
    const [application] = await this.ctx.db.select({ name: applications.name }).from(applications).where(eq(applications.id, applicationId));
    if (!application) throw new Error(`application ${applicationId} no longer exists`);
    // Sign-on's own grant: not an administrator's change, so no push of its own and no support check (S12).
    await addPermissions(this.ctx.db, user.uid, applicationId, pushPermissions, this.ctx.now());
    const issued = await issueOperatorToken(this.ctx, { email: pushUserEmail, application: application.name, expiresInSeconds: tokenLifetimeSeconds });
    this.tokens.set(applicationId, { token: issued.accessToken, expiresAt: issued.expiresAt });
    return issued.accessToken;
  }

  private pushUser(): Promise<User> {
    this.user ??= (async () => {
      const found = await findUserByEmail(this.ctx.db, pushUserEmail);
      if (found) return found;
      try {
        return await createApiUser(this.ctx, { email: pushUserEmail, name: "Sign-on push" });
      } catch (error) {
        // Another instance may have created it first.
        const created = await findUserByEmail(this.ctx.db, pushUserEmail);
        if (created) return created;
        throw error;
      }
    })();
    this.user.catch(() => {
      this.user = undefined;
    });
    return this.user;
  }
}
