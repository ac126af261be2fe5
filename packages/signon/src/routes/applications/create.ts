import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { checkApplicationForm } from "../../applications/application-fields.js";
import { registerApplication, RegistrationError } from "../../applications/register-application.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { isUniqueViolation } from "../../repositories/unique-violation.js";
import { redirectWithSecret } from "../../web/one-time-secret.js";
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
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.String({ maxLength: 400 }), ...applicationFormFields },
  { additionalProperties: false },
);

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
    { config: { errorFormat: "html" }, schema: { body: NewApplicationBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { _csrf: _ignored, ...values } = request.body;
      const showErrors = (errors: Record<string, string | undefined>) =>
        renderPage(request, reply, "applications/new.eta", { title: "New application: there is a problem", values: { ...emptyForm, ...values }, errors }, 400);
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
