import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import type { identityProviders } from "../db/schema.js";
import {
  deleteIdentityProvider,
  findIdentityProviderOfOrganisation,
  forgetUpstreamLinks,
  insertIdentityProvider,
  listIdentityProviders,
  updateIdentityProvider,
  type IdentityProvider,
} from "../repositories/identity-providers.js";
import type { Organisation } from "../repositories/organisations.js";
import { sealSecret } from "../security/secret-box.js";
import { forgetProviderConfiguration } from "./openid-upstream.js";
import { checkSamlProvider, type SamlProviderInput } from "./saml-settings.js";
import { checkOpenIdProvider, checkPolicy, ProviderSettingError, type CheckedPolicy, type OpenIdProviderInput, type ProviderPolicyInput } from "./settings.js";

export interface ProviderActor {
  uid: string | null;
  origin: RequestOrigin | null;
}

function sealingKey(ctx: SignonContext): Buffer {
  const key = ctx.secretKey ?? ctx.config.secretKey;
  if (!key) throw new Error("no secret key to seal the provider's credential with");
  return key;
}

/** Refuses a domain another organisation's provider already answers for; run with the table locked. */
async function refuseDomainsTaken(tx: SignonDatabase, domains: readonly string[], organisationId: string): Promise<void> {
  for (const provider of await listIdentityProviders(tx)) {
    if (provider.organisationId === organisationId) continue;
    const taken = provider.domains.find((domain) => domains.includes(domain));
    if (taken !== undefined) throw new ProviderSettingError(`${taken} already belongs to another organisation's provider.`, "domains");
  }
}

/**
 * Connects an organisation to its OpenID Connect provider, or changes the connection it has (a secret left out is
 * kept). Audited as `identity_provider_connected` or `identity_provider_changed` in the organisation's events, with
 * what changed and never a secret.
 */
export async function connectOpenIdProvider(
  ctx: SignonContext,
  organisation: Organisation,
  input: OpenIdProviderInput & ProviderPolicyInput,
  actor: ProviderActor,
): Promise<{ provider: IdentityProvider; created: boolean }> {
  const existing = await findIdentityProviderOfOrganisation(ctx.db, organisation.id);
  const changing = existing !== null && existing.protocol === "oidc";
  const openId = checkOpenIdProvider(input, ctx.config.mode, changing);
  const policy = checkPolicy(input);
  if (changing && existing.clientAuthentication !== openId.clientAuthentication && openId.clientCredential === null) {
    throw new ProviderSettingError(openId.clientAuthentication === "private_key_jwt" ? "private_key_jwt needs Sign-on's private key (PKCS #8 PEM)." : "Give the client secret the provider gave Sign-on.",
      openId.clientAuthentication === "private_key_jwt" ? "private_key" : "client_secret",
    );
  }
  const settings = {
    protocol: "oidc",
    issuer: openId.issuer,
    clientId: openId.clientId,
    clientAuthentication: openId.clientAuthentication,
    ...(openId.clientCredential === null ? {} : { clientCredentialSealed: sealSecret(sealingKey(ctx), openId.clientCredential) }),
    clientKeyId: openId.clientKeyId,
    clientCertificate: openId.clientCertificate ?? (changing ? existing.clientCertificate : null),
    scopes: openId.scopes,
    samlEntityId: null,
    samlSignOnUrl: null,
    samlLogoutUrl: null,
    samlCertificates: null,
    ...policy,
    updatedAt: ctx.now(),
  };
  const details = {
    protocol: "oidc",
    issuer: openId.issuer,
    client_id: openId.clientId,
    client_authentication: openId.clientAuthentication,
    ...(openId.clientCredential === null ? {} : { credential_replaced: true }),
  };
  return storeConnection(ctx, organisation, existing, settings, details, actor);
}

/**
 * Connects an organisation to its SAML 2.0 identity provider (from its metadata, or settings given one by one), or
 * changes the connection it has; audited as the OpenID Connect connection is.
 */
export async function connectSamlProvider(
  ctx: SignonContext,
  organisation: Organisation,
  input: SamlProviderInput & ProviderPolicyInput,
  actor: ProviderActor,
): Promise<{ provider: IdentityProvider; created: boolean }> {
  const existing = await findIdentityProviderOfOrganisation(ctx.db, organisation.id);
  const saml = checkSamlProvider(input, ctx.config.mode, ctx.config.samlSigning !== null);
  const policy = checkPolicy(input);
  const settings = {
    protocol: "saml",
    issuer: null,
    clientId: null,
    clientAuthentication: null,
    clientCredentialSealed: null,
    clientKeyId: null,
    clientCertificate: null,
    samlEntityId: saml.entityId,
    samlSignOnUrl: saml.signOnUrl,
    samlLogoutUrl: saml.logoutUrl,
    samlCertificates: saml.certificates,
    ...policy,
    updatedAt: ctx.now(),
  };
  return storeConnection(ctx, organisation, existing, settings, { protocol: "saml", issuer: saml.entityId, single_sign_on: saml.signOnUrl, certificates: saml.certificates.length }, actor);
}

/** Stores a checked connection, its domains owned by no other organisation's provider, with its event. */
async function storeConnection(
  ctx: SignonContext,
  organisation: Organisation,
  existing: IdentityProvider | null,
  settings: Omit<typeof identityProviders.$inferInsert, "id" | "organisationId" | "createdAt"> & CheckedPolicy,
  protocolDetails: Record<string, unknown>,
  actor: ProviderActor,
): Promise<{ provider: IdentityProvider; created: boolean }> {
  const now = ctx.now();
  const result = await ctx.db.transaction(async (tx) => {
    await tx.execute(sql`lock table signon.identity_providers in share row exclusive mode`);
    await refuseDomainsTaken(tx, settings.domains, organisation.id);
    const details = {
      organisation_id: organisation.id,
      slug: organisation.slug,
      ...protocolDetails,
      domains: settings.domains,
      password_addresses: settings.passwordAddresses,
      create_accounts: settings.createAccounts,
      suspend_unseen_days: settings.suspendUnseenDays,
    };
    if (existing) {
      const updated = await updateIdentityProvider(tx, existing.id, settings);
      if (!updated) throw new ProviderSettingError("The provider was disconnected meanwhile.", "domains");
      // Subjects are unique at one issuer only: another issuer (or protocol) links its people afresh, by address.
      const anotherIssuer = existing.protocol !== settings.protocol || existing.issuer !== (settings.issuer ?? null) || existing.samlEntityId !== (settings.samlEntityId ?? null);
      const linksForgotten = anotherIssuer ? await forgetUpstreamLinks(tx, existing.id) : 0;
      await audit(tx, {
        action: "identity_provider_changed",
        at: now,
        actorUid: actor.uid,
        origin: actor.origin,
        details: { ...details, ...(anotherIssuer ? { links_forgotten: linksForgotten } : {}) },
      });
      return { provider: updated, created: false };
    }
    const provider = await insertIdentityProvider(tx, { id: randomUUID(), organisationId: organisation.id, createdAt: now, ...settings });
    await audit(tx, { action: "identity_provider_connected", at: now, actorUid: actor.uid, origin: actor.origin, details });
    return { provider, created: true };
  });
  forgetProviderConfiguration(result.provider.id);
  return result;
}

/** Disconnects an organisation's provider: its people sign in with Sign-on passwords again (set through "Forgotten your password?"). */
export async function disconnectProvider(ctx: SignonContext, organisation: Organisation, actor: ProviderActor): Promise<boolean> {
  const existing = await findIdentityProviderOfOrganisation(ctx.db, organisation.id);
  if (!existing) return false;
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    if (!(await deleteIdentityProvider(tx, existing.id))) return;
    await audit(tx, {
      action: "identity_provider_disconnected",
      at: now,
      actorUid: actor.uid,
      origin: actor.origin,
      details: { organisation_id: organisation.id, slug: organisation.slug, protocol: existing.protocol, issuer: existing.issuer ?? existing.samlEntityId, domains: existing.domains },
    });
  });
  forgetProviderConfiguration(existing.id);
  return true;
}
