import type { StatementRunner } from "../db/statements.js";
import type { Application } from "./applications.js";

/** The columns of {@link clientLookup}: the application's (all `null` for an unknown client id) and `blocked_until`. */
export interface ClientRow {
  id: string | null;
  name: string;
  client_id: string;
  client_secret_hash: string;
  redirect_uris: string[];
  home_uri: string | null;
  push_base_url: string | null;
  supported_permissions: string[];
  delegatable_permissions: string[];
  require_pkce: boolean;
  retired: boolean;
  api_only: boolean;
  push_enabled: boolean;
  default_permissions: string[];
  permissions_not_grantable_in_ui: string[];
  oidc_scopes: string[];
  id_token_signed_response_alg: string;
  post_logout_redirect_uris: string[];
  backchannel_logout_uri: string | null;
  created_at: Date;
  blocked_until: Date | null;
}

/** The parameters (`$n`) a {@link clientLookup} takes its values from. */
export interface ClientLookupParameters {
  clientId: string;
  /** The failure counters' keys (`text[]`). */
  keys: string;
  now: string;
  maxFailures: string;
}

/**
 * SQL for exactly one row: the application with a client id (or nulls), and
 * until when failed attempts block authentication under the keys (the latest
 * end among windows holding at least the most failures allowed), read together.
 */
export function clientLookup(p: ClientLookupParameters): string {
  return `
    select a.id, a.name, a.client_id, a.client_secret_hash, a.redirect_uris, a.home_uri, a.push_base_url,
           a.supported_permissions, a.delegatable_permissions, a.require_pkce, a.retired, a.created_at,
           a.api_only, a.push_enabled, a.default_permissions, a.permissions_not_grantable_in_ui,
           a.oidc_scopes, a.id_token_signed_response_alg, a.post_logout_redirect_uris, a.backchannel_logout_uri,
           (select max(c.window_ends_at) from signon.failure_counters c
             where c.key = any(${p.keys}::text[]) and c.window_ends_at > ${p.now}::timestamptz and c.failures >= ${p.maxFailures}) as blocked_until
      from (select 1) as one
      left join signon.applications a on a.client_id = ${p.clientId}`;
}

const clientForAuthenticationStatement = {
  name: "signon_client_for_authentication",
  text: clientLookup({ clientId: "$1", keys: "$2", now: "$3", maxFailures: "$4" }),
};

/** What authenticating a client needs of its application; statements that act for the client read only these. */
export type ClientOfRequest = Pick<Application, "id" | "name" | "clientId" | "clientSecretHash" | "retired" | "idTokenSignedResponseAlg">;

/** What a client authentication found: the application (`null` for an unknown client id) and until when it is blocked. */
export interface FoundClient<A extends ClientOfRequest = Application> {
  application: A | null;
  blockedUntil: Date | null;
}

/** The columns of a {@link clientLookup} row that {@link ClientOfRequest} needs. */
export type ClientOfRequestRow = Pick<ClientRow, "id" | "name" | "client_id" | "client_secret_hash" | "retired" | "id_token_signed_response_alg" | "blocked_until">;

/** What authenticating the client needs of the application of a row (`null` for an unknown client id), and its block. */
export function foundClientOfRequest(row: ClientOfRequestRow | undefined): FoundClient<ClientOfRequest> {
  if (!row) return { application: null, blockedUntil: null };
  const application =
    row.id === null
      ? null
      : {
          id: row.id,
          name: row.name,
          clientId: row.client_id,
          clientSecretHash: row.client_secret_hash,
          retired: row.retired,
          idTokenSignedResponseAlg: row.id_token_signed_response_alg,
        };
  return { application, blockedUntil: row.blocked_until };
}

/** The application and block of a {@link clientLookup} row. */
export function foundClient(row: ClientRow | undefined): FoundClient {
  const { application, blockedUntil } = foundClientOfRequest(row);
  if (!row || application === null) return { application: null, blockedUntil };
  return {
    application: {
      ...application,
      redirectUris: row.redirect_uris,
      homeUri: row.home_uri,
      pushBaseUrl: row.push_base_url,
      supportedPermissions: row.supported_permissions,
      delegatablePermissions: row.delegatable_permissions,
      requirePkce: row.require_pkce,
      apiOnly: row.api_only,
      pushEnabled: row.push_enabled,
      defaultPermissions: row.default_permissions,
      permissionsNotGrantableInUi: row.permissions_not_grantable_in_ui,
      oidcScopes: row.oidc_scopes,
      postLogoutRedirectUris: row.post_logout_redirect_uris,
      backchannelLogoutUri: row.backchannel_logout_uri,
      createdAt: row.created_at,
    },
    blockedUntil,
  };
}

/**
 * The application with a client id, and until when failed attempts block
 * authentication under `keys`: one prepared statement for every
 * client-authenticated request. `application` is `null` for an unknown client id.
 */
export async function findClientForAuthentication(
  statements: StatementRunner,
  clientId: string,
  keys: readonly string[],
  maxFailures: number,
  now: Date,
): Promise<FoundClient> {
  const [row] = await statements.run<ClientRow>(clientForAuthenticationStatement, [clientId, keys, now.toISOString(), maxFailures]);
  return foundClient(row);
}
