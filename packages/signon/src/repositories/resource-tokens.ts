import type { StatementRunner } from "../db/statements.js";

/** What a resource request needs to know about a live access token, read in one query. */
export interface LiveAccessToken {
  expiresAt: Date;
  createdAt: Date;
  application: { id: string; clientId: string; retired: boolean };
  user: {
    uid: string;
    name: string;
    email: string;
    suspendedAt: Date | null;
    organisationSlug: string | null;
    organisationContentId: string | null;
  };
  /** The user's permission names on the token's application, sorted. */
  permissions: string[];
}

interface Row {
  expires_at: Date;
  created_at: Date;
  application_id: string;
  client_id: string;
  retired: boolean;
  uid: string;
  name: string;
  email: string;
  suspended_at: Date | null;
  organisation_slug: string | null;
  organisation_content_id: string | null;
  permissions: string[];
}

const liveAccessTokenStatement = {
  name: "signon_live_access_token",
  text: `
    select t.expires_at, t.created_at, a.id as application_id, a.client_id, a.retired,
           u.uid, u.name, u.email, u.suspended_at, o.slug as organisation_slug, o.content_id as organisation_content_id,
           array(select p.permission from signon.user_permissions p
                 where p.user_uid = t.user_uid and p.application_id = t.application_id
                 order by p.permission) as permissions
      from signon.access_tokens t
      join signon.users u on u.uid = t.user_uid
      join signon.applications a on a.id = t.application_id
      left join signon.organisations o on o.id = u.organisation_id
     where t.token_hash = $1 and t.revoked_at is null and t.expires_at > $2::timestamptz
     limit 1`,
};

/**
 * Finds an access token that is neither expired nor revoked at `now` (revoking
 * a grant revokes its tokens in the same transaction, so the token's own
 * `revoked_at` is enough), with its user, organisation, application and the
 * user's permissions there: one prepared statement, since every `/user.json`
 * call does this.
 */
export async function findLiveAccessTokenForResource(statements: StatementRunner, tokenHash: string, now: Date): Promise<LiveAccessToken | null> {
  const [row] = await statements.run<Row>(liveAccessTokenStatement, [tokenHash, now.toISOString()]);
  if (!row) return null;
  return {
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    application: { id: row.application_id, clientId: row.client_id, retired: row.retired },
    user: {
      uid: row.uid,
      name: row.name,
      email: row.email,
      suspendedAt: row.suspended_at,
      organisationSlug: row.organisation_slug,
      organisationContentId: row.organisation_content_id,
    },
    permissions: row.permissions,
  };
}
