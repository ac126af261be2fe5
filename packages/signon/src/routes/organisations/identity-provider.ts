import { Type, type FastifyPluginAsyncTypebox, type Static } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { describeEvent } from "../../accounts/event-wording.js";
import { connectOpenIdProvider, connectSamlProvider, disconnectProvider } from "../../identity-providers/connect.js";
import { samlLogoutUrl, samlServiceProvider } from "../../identity-providers/saml-sign-in.js";
import { openIdCallbackUrl } from "../../identity-providers/openid-sign-in.js";
import { ProviderSettingError } from "../../identity-providers/settings.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { listIdentityProviderEvents } from "../../repositories/identity-provider-events.js";
import { findIdentityProviderOfOrganisation, type IdentityProvider } from "../../repositories/identity-providers.js";
import { findOrganisationById } from "../../repositories/organisation-admin.js";
import type { Organisation } from "../../repositories/organisations.js";
import { actorOf, formatTime, isId, sendNotFound } from "../../web/admin-section.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const ProviderBody = Type.Object(
  {
    _csrf: text(256),
    protocol: Type.Optional(Type.Union([Type.Literal("oidc"), Type.Literal("saml")])),
    saml_metadata: text(200_000),
    saml_entity_id: text(500),
    saml_sign_on_url: text(2000),
    saml_logout_url: text(2000),
    saml_certificates: text(50_000),
    issuer: text(500),
    client_id: text(255),
    client_authentication: text(40),
    client_secret: text(1000),
    private_key: text(20_000),
    certificate: text(20_000),
    key_id: text(200),
    scopes: text(500),
    domains: text(5000),
    password_addresses: text(5000),
    create_accounts: Type.Optional(Type.Literal("yes")),
    second_factor_contexts: text(2000),
    suspend_unseen_days: text(10),
  },
  { additionalProperties: false },
);
/** Room for every field at its limit, URL-encoded (pasted XML and PEM grow by about half; three times is the worst case). */
const providerBodyLimitBytes = 1024 * 1024;
const DisconnectBody = Type.Object({ _csrf: text(256) }, { additionalProperties: false });

type Values = Record<string, string>;
type ProviderForm = Static<typeof ProviderBody>;

/** The values of a post to show again: everything typed but the client secret (and the CSRF token, which the page sets). */
function postedValues(body: ProviderForm): Values {
  const { _csrf: _token, client_secret: _secret, ...typed } = body;
  return { ...valuesOf(null), ...Object.fromEntries(Object.entries(typed).map(([name, value]) => [name, value ?? ""])) };
}

const providerAnswer = overLongAnswer(
  ProviderBody,
  {
    saml_metadata: "metadata",
    saml_entity_id: "an entity id",
    saml_sign_on_url: "a single sign-on URL",
    saml_logout_url: "a single logout URL",
    saml_certificates: "certificates",
    issuer: "an issuer",
    client_id: "a client id",
    client_secret: "a client secret",
    private_key: "a private key",
    certificate: "a certificate",
    key_id: "a key id",
    scopes: "scopes",
    domains: "domains",
    password_addresses: "addresses",
    second_factor_contexts: "acr values",
    suspend_unseen_days: "a number of days",
  },
  async (request, reply, body, errors) => {
    const id = (request.params as { id: string }).id;
    const organisation = isId(id) ? await findOrganisationById(request.server.signon.db, id) : null;
    if (!organisation) return sendNotFound(request, reply, "organisation");
    const provider = await findIdentityProviderOfOrganisation(request.server.signon.db, organisation.id);
    return renderProviderPage(request, reply, organisation, provider, postedValues(body), errors);
  },
);

function valuesOf(provider: IdentityProvider | null): Values {
  return {
    protocol: provider?.protocol ?? "oidc",
    saml_entity_id: provider?.samlEntityId ?? "",
    saml_sign_on_url: provider?.samlSignOnUrl ?? "",
    saml_logout_url: provider?.samlLogoutUrl ?? "",
    issuer: provider?.issuer ?? "",
    client_id: provider?.clientId ?? "",
    client_authentication: provider?.clientAuthentication ?? "client_secret_basic",
    key_id: provider?.clientKeyId ?? "",
    scopes: provider?.scopes ?? "openid email profile",
    domains: provider?.domains.join(", ") ?? "",
    password_addresses: provider?.passwordAddresses.join(", ") ?? "",
    create_accounts: provider?.createAccounts ? "yes" : "",
    second_factor_contexts: provider?.secondFactorContexts.join(" ") ?? "",
    suspend_unseen_days: provider?.suspendUnseenDays === null || provider === null ? "" : String(provider.suspendUnseenDays),
  };
}

async function renderProviderPage(
  request: FastifyRequest,
  reply: FastifyReply,
  organisation: Organisation,
  provider: IdentityProvider | null,
  values: Values,
  errors: Record<string, string>,
): Promise<FastifyReply> {
  const ctx = request.server.signon;
  const events = (await listIdentityProviderEvents(ctx.db, organisation.id, { limit: 20 })).map((event) => ({
    time: formatTime(event.occurredAt),
    iso: event.occurredAt.toISOString(),
    text: describeEvent(event, ""),
    by: event.actorUid === null ? (event.action.startsWith("upstream_") ? "The provider" : "Sign-on (a command or a job)") : (event.actorName ?? "A deleted user"),
  }));
  return renderPage(
    request,
    reply,
    "organisations/identity-provider.eta",
    {
      title: Object.keys(errors).length > 0 ? `Identity provider of ${organisation.name}: there is a problem` : `Identity provider of ${organisation.name}`,
      organisation,
      provider,
      values,
      errors,
      redirectUri: openIdCallbackUrl(ctx),
      logoutUri: provider === null ? null : new URL(`/sign-in/upstream/${provider.id}/backchannel-logout`, ctx.config.publicUrl).href,
      serviceProvider: samlServiceProvider(ctx),
      samlLogoutUri: provider === null ? null : samlLogoutUrl(ctx, provider),
      events,
    },
    Object.keys(errors).length > 0 ? 400 : 200,
  );
}

/**
 * `GET|POST /organisations/:id/identity-provider` connects an organisation to its own OpenID Connect or SAML 2.0 provider or
 * changes the connection (a secret left empty is kept), and lists its latest events (changes, refused sign-ins,
 * logouts); `POST /organisations/:id/identity-provider/disconnect` disconnects it. Superadmins only, as the rest of the
 * organisations section.
 */
export const identityProviderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const organisationOf = async (id: string) => (isId(id) ? await findOrganisationById(app.signon.db, id) : null);

  app.get("/organisations/:id/identity-provider", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const organisation = await organisationOf(request.params.id);
    if (!organisation) return sendNotFound(request, reply, "organisation");
    const provider = await findIdentityProviderOfOrganisation(app.signon.db, organisation.id);
    return renderProviderPage(request, reply, organisation, provider, valuesOf(provider), {});
  });

  app.post(
    "/organisations/:id/identity-provider",
    {
      bodyLimit: providerBodyLimitBytes,
      config: { errorFormat: "html", overLong: providerAnswer },
      schema: { params: Params, body: ProviderBody },
      preValidation: requireFormBody,
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const organisation = await organisationOf(request.params.id);
      if (!organisation) return sendNotFound(request, reply, "organisation");
      const body = request.body;
      const policy = {
        domains: body.domains ?? "",
        passwordAddresses: body.password_addresses,
        createAccounts: body.create_accounts === "yes",
        secondFactorContexts: body.second_factor_contexts,
        suspendUnseenDays: body.suspend_unseen_days,
      };
      try {
        const { created } =
          body.protocol === "saml"
            ? await connectSamlProvider(
                app.signon,
                organisation,
                {
                  metadata: body.saml_metadata,
                  entityId: body.saml_entity_id,
                  signOnUrl: body.saml_sign_on_url,
                  logoutUrl: body.saml_logout_url,
                  certificates: body.saml_certificates,
                  ...policy,
                },
                actorOf(request),
              )
            : await connectOpenIdProvider(
          app.signon,
          organisation,
          {
            issuer: body.issuer ?? "",
            clientId: body.client_id ?? "",
            clientAuthentication: body.client_authentication,
            clientSecret: body.client_secret,
            privateKey: body.private_key,
            certificate: body.certificate,
            keyId: body.key_id,
            scopes: body.scopes,
            ...policy,
          },
          actorOf(request),
        );
        const text = created ? `${organisation.name} is connected to its identity provider.` : `${organisation.name}'s identity provider is saved.`;
        return await redirectWithFlash(request, reply, `/organisations/${organisation.id}/identity-provider`, { kind: "success", text });
      } catch (error) {
        if (!(error instanceof ProviderSettingError)) throw error;
        const provider = await findIdentityProviderOfOrganisation(app.signon.db, organisation.id);
        return renderProviderPage(request, reply, organisation, provider, postedValues(body), { [error.field]: error.message });
      }
    },
  );

  app.post(
    "/organisations/:id/identity-provider/disconnect",
    { config: { errorFormat: "html" }, schema: { params: Params, body: DisconnectBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const organisation = await organisationOf(request.params.id);
      if (!organisation) return sendNotFound(request, reply, "organisation");
      const disconnected = await disconnectProvider(app.signon, organisation, actorOf(request));
      const text = disconnected
        ? `${organisation.name} is disconnected from its identity provider: its people sign in with Sign-on passwords again (“Forgotten your password?” sets one).`
        : `${organisation.name} had no identity provider.`;
      return redirectWithFlash(request, reply, `/organisations/${organisation.id}/identity-provider`, { kind: "success", text });
    },
  );
};
