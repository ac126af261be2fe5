import { Type, type FastifyPluginAsyncTypebox, type Static } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { applicationNameMaxLength, checkApplicationForm, type ApplicationFormInput } from "../../applications/application-fields.js";
import { registerApplication, RegistrationError } from "../../applications/register-application.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { isUniqueViolation } from "../../repositories/unique-violation.js";
import { redirectWithSecret } from "../../web/one-time-secret.js";
import { overLongAnswer, type FieldNoun } from "../../web/over-long-fields.js";
import { renderPage } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";

/** The application form as posted. */
export const applicationFormFields = {
  redirect_uris: Type.String({ maxLength: 8000 }),
  home_uri: Type.String({ maxLength: 2000 }),
  push_base_url: Type.String({ maxLength: 2000 }),
  permissions: Type.String({ maxLength: 2000 }),
  delegatable_permissions: Type.String({ maxLength: 2000 }),
  require_pkce: Type.Optional(Type.String({ maxLength: 8 })),
  default_permissions: Type.Optional(Type.String({ maxLength: 2000 })),
  permissions_not_grantable_in_ui: Type.Optional(Type.String({ maxLength: 2000 })),
  api_only: Type.Optional(Type.String({ maxLength: 8 })),
  push_enabled: Type.Optional(Type.String({ maxLength: 8 })),
};

const NewApplicationBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.String({ maxLength: applicationNameMaxLength }), ...applicationFormFields },
  { additionalProperties: false },
);

const list = (noun: string): FieldNoun => ({ noun, unit: "characters in all" });

/** What the messages call the typed fields of the application form. */
export const applicationFormNouns = {
  name: "a name",
  redirect_uris: list("redirect URIs"),
  home_uri: "a home URI",
  push_base_url: "a push base URL",
  permissions: list("supported permissions"),
  delegatable_permissions: list("delegatable permissions"),
  default_permissions: list("default permissions"),
  permissions_not_grantable_in_ui: list("permissions kept out of the web interface"),
};

/** The messages of the form's own checks on `values`, and `errors` over them: a form shown again for over-long values says what else is wrong too. */
export function withFormChecks(values: ApplicationFormInput, errors: Record<string, string>, config: Parameters<typeof checkApplicationForm>[1]): Record<string, string | undefined> {
  const checked = checkApplicationForm(values, config);
  return { ...(checked.ok ? {} : checked.errors), ...errors };
}

const emptyForm = {
  name: "",
  redirect_uris: "",
  home_uri: "",
  push_base_url: "",
  permissions: "",
  delegatable_permissions: "",
  require_pkce: "",
  default_permissions: "",
  permissions_not_grantable_in_ui: "",
  api_only: "",
  push_enabled: "yes",
};

function showNewForm(request: FastifyRequest, reply: FastifyReply, values: Static<typeof NewApplicationBody>, errors: Record<string, string | undefined>) {
  const { _csrf: _ignored, ...posted } = values;
  return renderPage(request, reply, "applications/new.eta", { title: "New application: there is a problem", values: { ...emptyForm, ...posted }, errors }, 400);
}

const newFormAnswer = overLongAnswer(NewApplicationBody, applicationFormNouns, (request, reply, body, errors) =>
  showNewForm(request, reply, body, withFormChecks(body, errors, request.server.signon.config)),
);

/**
 * `GET /applications/new` shows the form; `POST /applications/new` registers
 * the application and redirects to `GET /applications/:id/secret`, which
 * shows its client id and secret once (the secret is stored only as its
 * digest and never shown again).
 */
const applicationCreateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications/new", { config: { errorFormat: "html" } }, async (request, reply) =>
    renderPage(request, reply, "applications/new.eta", { title: "New application", values: emptyForm, errors: {} }),
  );

  app.post(
    "/applications/new",
    { config: { errorFormat: "html", overLong: newFormAnswer }, schema: { body: NewApplicationBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { _csrf: _ignored, ...values } = request.body;
      const showErrors = (errors: Record<string, string | undefined>) => showNewForm(request, reply, request.body, errors);
      const checked = checkApplicationForm(values, app.signon.config);
      if (!checked.ok) return showErrors(checked.errors);
      const { settings } = checked;
      try {
        const { application, clientSecret } = await registerApplication(
          app.signon,
          {
            name: settings.name,
            redirectUris: settings.redirectUris,
            homeUri: settings.homeUri ?? undefined,
            pushBaseUrl: settings.pushBaseUrl ?? undefined,
            permissions: settings.supportedPermissions,
            delegatablePermissions: settings.delegatablePermissions,
            requirePkce: settings.requirePkce,
            defaultPermissions: settings.defaultPermissions,
            permissionsNotGrantableInUi: settings.permissionsNotGrantableInUi,
            apiOnly: settings.apiOnly,
            pushEnabled: settings.pushEnabled,
          },
          signedInUser(request).uid,
          requestOrigin(request),
        );
        return redirectWithSecret(
          request,
          reply,
          `/applications/${application.id}/secret`,
          { kind: "success", text: `${application.name} is registered. Give it its client id and this secret.` },
          clientSecret,
        );
      } catch (error) {
        // The name is the one rule checked against the database (two people may pick the same name at once).
        if (error instanceof RegistrationError) return showErrors({ name: error.message });
        if (isUniqueViolation(error)) return showErrors({ name: `An application named ${settings.name} already exists` });
        throw error;
      }
    },
  );
};

export default applicationCreateRoutes;
