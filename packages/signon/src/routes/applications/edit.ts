import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { applicationFormValues, checkApplicationForm } from "../../applications/application-fields.js";
import { clientAuthenticationPressure } from "../../applications/client-authentication-pressure.js";
import { ApplicationNameTaken, updateApplication } from "../../applications/update-application.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { applicationFormFields } from "./create.js";
import { actorOf, isId, sendNotFound } from "../../web/admin-section.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const EditApplicationBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.Optional(Type.String({ maxLength: 400 })), ...applicationFormFields },
  { additionalProperties: false },
);

/**
 * `GET /applications/:id` shows an application with its settings form and
 * the rotate and retire buttons; `POST /applications/:id` saves the settings.
 * Dropping a supported permission revokes it from its holders through the
 * push outbox (see `updateApplication`).
 */
const applicationEditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications/:id", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    return renderPage(request, reply, "applications/edit.eta", {
      title: application.name,
      application,
      pressure: await clientAuthenticationPressure(app.signon, application),
      values: applicationFormValues(application),
      errors: {},
    });
  });

  app.post(
    "/applications/:id",
    {
      config: { errorFormat: "html" },
      schema: { params: Params, body: EditApplicationBody },
      preValidation: requireFormBody,
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
      if (!application) return sendNotFound(request, reply, "application");
      const { _csrf: _ignored, ...posted } = request.body;
      // A form from before these fields existed keeps their current values (an empty checkbox is simply not sent, so not those).
      const current = applicationFormValues(application);
      const values = {
        name: current.name,
        default_permissions: current.default_permissions,
        permissions_not_grantable_in_ui: current.permissions_not_grantable_in_ui,
        push_enabled: current.push_enabled,
        ...posted,
      };
      const showErrors = async (errors: Record<string, string | undefined>) =>
        renderPage(
          request,
          reply,
          "applications/edit.eta",
          {
            title: `${application.name}: there is a problem`,
            application,
            pressure: await clientAuthenticationPressure(app.signon, application),
            values: { ...applicationFormValues(application), ...values, require_pkce: values.require_pkce ?? "", api_only: values.api_only ?? "" },
            errors,
          },
          400,
        );
      const checked = checkApplicationForm(values, app.signon.config);
      if (!checked.ok) return showErrors(checked.errors);
      let update;
      try {
        update = await updateApplication(app.signon, application.id, checked.settings, actorOf(request));
      } catch (error) {
        if (error instanceof ApplicationNameTaken) return showErrors({ name: error.message });
        throw error;
      }
      if (!update) return sendNotFound(request, reply, "application");
      const text =
        update.changed.length === 0
          ? "Nothing changed."
          : update.usersWhoLostPermissions > 0
            ? `${update.application.name} is saved. ${update.usersWhoLostPermissions} user(s) lost permissions it no longer supports; the application is told.`
            : `${update.application.name} is saved.`;
      return redirectWithFlash(request, reply, `/applications/${application.id}`, { kind: "success", text });
    },
  );
};

export default applicationEditRoutes;
