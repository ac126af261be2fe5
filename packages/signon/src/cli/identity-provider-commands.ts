import { readFile } from "node:fs/promises";
import type { SignonContext } from "../context.js";
import { connectOpenIdProvider, connectSamlProvider, disconnectProvider } from "../identity-providers/connect.js";
import { samlLogoutUrl, samlServiceProvider } from "../identity-providers/saml-sign-in.js";
import { openIdCallbackUrl } from "../identity-providers/openid-sign-in.js";
import { ProviderSettingError } from "../identity-providers/settings.js";
import { findIdentityProviderOfOrganisation, listIdentityProviders, type IdentityProvider } from "../repositories/identity-providers.js";
import { findOrganisationById } from "../repositories/organisation-admin.js";
import { findOrganisationBySlug, type Organisation } from "../repositories/organisations.js";
import { resolveSecretKey } from "../security/secret-box.js";
import { UsageError, type Command } from "./output.js";

const connectUsage =
  "signon identity-providers connect ORGANISATION_SLUG --issuer URL --client-id ID --domains dept.example.gov.uk[,…] " +
  "[--client-authentication client_secret_basic|client_secret_post|private_key_jwt] [--client-secret-file FILE] " +
  "[--private-key-file FILE.pem] [--certificate-file FILE.pem] [--key-id KID] [--scopes 'openid email profile'] " +
  "[--password-addresses a@…,b@…] [--create-accounts] [--second-factor-contexts 'acr …'] [--suspend-unseen-days N]   " +
  "(the client secret: --client-secret-file, or SIGNON_UPSTREAM_CLIENT_SECRET; never on the command line)";

async function organisationOf(ctx: SignonContext, slug: unknown): Promise<Organisation> {
  if (typeof slug !== "string" || slug === "") throw new UsageError("Give the organisation's slug");
  const organisation = await findOrganisationBySlug(ctx.db, slug);
  if (!organisation) throw new UsageError(`No organisation has the slug ${slug}`);
  return organisation;
}

async function fileText(path: unknown, what: string): Promise<string | undefined> {
  if (typeof path !== "string") return undefined;
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`${what} ${path} cannot be read: ${(error as Error).message}`);
  }
}

/** Where the provider reaches Sign-on: what its administrators register. */
function addresses(ctx: SignonContext, provider: IdentityProvider): Record<string, string> {
  if (provider.protocol === "saml") {
    const sp = samlServiceProvider(ctx);
    return { sp_entity_id: sp.entityId, sp_metadata: sp.entityId, acs_url: sp.assertionConsumerService, single_logout_url: samlLogoutUrl(ctx, provider) };
  }
  return {
    redirect_uri: openIdCallbackUrl(ctx),
    backchannel_logout_uri: new URL(`/sign-in/upstream/${provider.id}/backchannel-logout`, ctx.config.publicUrl).href,
  };
}

/** What is shown of a provider: its settings, never its secret. */
function described(ctx: SignonContext, provider: IdentityProvider, slug: string): Record<string, unknown> {
  const protocolSettings =
    provider.protocol === "saml"
      ? { entity_id: provider.samlEntityId, sso_url: provider.samlSignOnUrl, slo_url: provider.samlLogoutUrl, certificates: provider.samlCertificates?.length ?? 0 }
      : { issuer: provider.issuer, client_id: provider.clientId, client_authentication: provider.clientAuthentication, scopes: provider.scopes };
  return {
    organisation: slug,
    id: provider.id,
    protocol: provider.protocol,
    ...protocolSettings,
    domains: provider.domains,
    password_addresses: provider.passwordAddresses,
    create_accounts: provider.createAccounts,
    second_factor_contexts: provider.secondFactorContexts,
    suspend_unseen_days: provider.suspendUnseenDays,
    ...addresses(ctx, provider),
  };
}

function describedLines(details: Record<string, unknown>): string[] {
  return Object.entries(details).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(", ") || "(none)" : value === null ? "(none)" : String(value)}`);
}

const connectSamlUsage =
  "signon identity-providers connect-saml ORGANISATION_SLUG (--metadata-file IDP-METADATA.xml | --entity-id ID --sso-url URL [--slo-url URL] --certificate-file IDP-SIGNING.pem) " +
  "--domains dept.example.gov.uk[,…] [--password-addresses a@…,b@…] [--create-accounts] [--second-factor-contexts 'class-ref …'] [--suspend-unseen-days N]";

/** Connecting organisations to their own identity providers (docs/identity-providers.md). */
export const identityProviderCommands: Record<string, Command> = {
  "identity-providers connect": {
    usage: connectUsage,
    positionals: ["organisation"],
    options: {
      issuer: { type: "string" },
      "client-id": { type: "string" },
      "client-authentication": { type: "string" },
      "client-secret-file": { type: "string" },
      "private-key-file": { type: "string" },
      "certificate-file": { type: "string" },
      "key-id": { type: "string" },
      scopes: { type: "string" },
      domains: { type: "string" },
      "password-addresses": { type: "string" },
      "create-accounts": { type: "boolean" },
      "second-factor-contexts": { type: "string" },
      "suspend-unseen-days": { type: "string" },
    },
    async run(ctx, options, env) {
      const organisation = await organisationOf(ctx, options["organisation"]);
      if (typeof options["issuer"] !== "string" || typeof options["client-id"] !== "string" || typeof options["domains"] !== "string") {
        throw new UsageError(`Give --issuer, --client-id and --domains\n${connectUsage}`);
      }
      const clientSecret = (await fileText(options["client-secret-file"], "The client secret file"))?.trim() ?? env["SIGNON_UPSTREAM_CLIENT_SECRET"];
      const withKey = { ...ctx, secretKey: await resolveSecretKey(ctx.config.secretKey, ctx.config.dataDir) };
      try {
        const { provider, created } = await connectOpenIdProvider(
          withKey,
          organisation,
          {
            issuer: options["issuer"],
            clientId: options["client-id"],
            clientAuthentication: options["client-authentication"] as string | undefined,
            clientSecret,
            privateKey: await fileText(options["private-key-file"], "The private key file"),
            certificate: await fileText(options["certificate-file"], "The certificate file"),
            keyId: options["key-id"] as string | undefined,
            scopes: options["scopes"] as string | undefined,
            domains: options["domains"],
            passwordAddresses: options["password-addresses"] as string | undefined,
            createAccounts: options["create-accounts"] === true,
            secondFactorContexts: options["second-factor-contexts"] as string | undefined,
            suspendUnseenDays: options["suspend-unseen-days"] as string | undefined,
          },
          { uid: null, origin: null },
        );
        const details = described(ctx, provider, organisation.slug);
        return {
          json: { ...details, created },
          text: [
            `${created ? "Connected" : "Changed the connection of"} ${organisation.name} to ${provider.issuer}.`,
            `Register at the provider: redirect URI ${String(details["redirect_uri"])}; back-channel logout URI ${String(details["backchannel_logout_uri"])}.`,
            `People at ${provider.domains.join(", ")} now sign in there.`,
          ],
        };
      } catch (error) {
        if (error instanceof ProviderSettingError) throw new UsageError(error.message);
        throw error;
      }
    },
  },
  "identity-providers connect-saml": {
    usage: connectSamlUsage,
    positionals: ["organisation"],
    options: {
      "metadata-file": { type: "string" },
      "entity-id": { type: "string" },
      "sso-url": { type: "string" },
      "slo-url": { type: "string" },
      "certificate-file": { type: "string" },
      domains: { type: "string" },
      "password-addresses": { type: "string" },
      "create-accounts": { type: "boolean" },
      "second-factor-contexts": { type: "string" },
      "suspend-unseen-days": { type: "string" },
    },
    async run(ctx, options) {
      const organisation = await organisationOf(ctx, options["organisation"]);
      if (typeof options["domains"] !== "string") throw new UsageError(`Give --domains\n${connectSamlUsage}`);
      try {
        const { provider, created } = await connectSamlProvider(
          ctx,
          organisation,
          {
            metadata: await fileText(options["metadata-file"], "The metadata file"),
            entityId: options["entity-id"] as string | undefined,
            signOnUrl: options["sso-url"] as string | undefined,
            logoutUrl: options["slo-url"] as string | undefined,
            certificates: await fileText(options["certificate-file"], "The certificate file"),
            domains: options["domains"],
            passwordAddresses: options["password-addresses"] as string | undefined,
            createAccounts: options["create-accounts"] === true,
            secondFactorContexts: options["second-factor-contexts"] as string | undefined,
            suspendUnseenDays: options["suspend-unseen-days"] as string | undefined,
          },
          { uid: null, origin: null },
        );
        const details = described(ctx, provider, organisation.slug);
        return {
          json: { ...details, created },
          text: [
            `${created ? "Connected" : "Changed the connection of"} ${organisation.name} to ${String(provider.samlEntityId)}.`,
            `Register at the identity provider Sign-on's metadata ${String(details["sp_metadata"])} (entity id ${String(details["sp_entity_id"])}, assertion consumer service ${String(details["acs_url"])}, single logout ${String(details["single_logout_url"])}).`,
            `People at ${provider.domains.join(", ")} now sign in there.`,
          ],
        };
      } catch (error) {
        if (error instanceof ProviderSettingError) throw new UsageError(error.message);
        throw error;
      }
    },
  },
  "identity-providers show": {
    usage: "signon identity-providers show ORGANISATION_SLUG",
    positionals: ["organisation"],
    options: {},
    async run(ctx, options) {
      const organisation = await organisationOf(ctx, options["organisation"]);
      const provider = await findIdentityProviderOfOrganisation(ctx.db, organisation.id);
      if (!provider) return { json: { organisation: organisation.slug, provider: null }, text: [`${organisation.name} signs in with Sign-on passwords (no provider).`] };
      const details = described(ctx, provider, organisation.slug);
      return { json: details, text: describedLines(details) };
    },
  },
  "identity-providers list": {
    usage: "signon identity-providers list",
    options: {},
    async run(ctx) {
      const rows = [];
      for (const provider of await listIdentityProviders(ctx.db)) {
        const organisation = await findOrganisationById(ctx.db, provider.organisationId);
        rows.push(described(ctx, provider, organisation?.slug ?? provider.organisationId));
      }
      return {
        json: { providers: rows },
        text: rows.length === 0 ? ["No organisation is connected to an identity provider."] : rows.map((row) => `${String(row["organisation"])}: ${String(row["issuer"] ?? row["entity_id"])} (${(row["domains"] as string[]).join(", ")})`),
      };
    },
  },
  "identity-providers disconnect": {
    usage: "signon identity-providers disconnect ORGANISATION_SLUG",
    positionals: ["organisation"],
    options: {},
    async run(ctx, options) {
      const organisation = await organisationOf(ctx, options["organisation"]);
      const disconnected = await disconnectProvider(ctx, organisation, { uid: null, origin: null });
      return {
        json: { organisation: organisation.slug, disconnected },
        text: [disconnected ? `Disconnected ${organisation.name}: its people sign in with Sign-on passwords again (“Forgotten your password?” sets one).` : `${organisation.name} had no provider.`],
        exitCode: disconnected ? 0 : 1,
      };
    },
  },
};
