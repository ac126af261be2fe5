import { Type, type FastifyPluginAsyncTypebox, type Static } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { applicationFormValues, applicationNameMaxLength, checkApplicationForm } from "../../applications/application-fields.js";
import { clientAuthenticationPressure } from "../../applications/client-authentication-pressure.js";
import { ApplicationNameTaken, updateApplication } from "../../applications/update-application.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import type { Application } from "../../repositories/applications.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { applicationFormFields, applicationFormNouns, withFormChecks } from "./create.js";
import { actorOf, isId, sendNotFound } from "../../web/admin-section.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const EditApplicationBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.Optional(Type.String({ maxLength: applicationNameMaxLength })), ...applicationFormFields },
  { additionalProperties: false },
);

/** The values of a posted settings form: a field the form did not send keeps the application's value (a form from before the field existed). */
function postedValues(application: Application, body: Static<typeof EditApplicationBody>) {
  const { _csrf: _ignored, ...posted } = body;
  // An empty checkbox is simply not sent, so not those.
  const current = applicationFormValues(application);
  return {
    name: current.name,
    default_permissions: current.default_permissions,
    permissions_not_grantable_in_ui: current.permissions_not_grantable_in_ui,
    push_enabled: current.push_enabled,
    ...posted,
  };
}

/** The application's page with its settings form as posted, and a message by each field that is not right (400). */
async function showSettingsErrors(
  request: FastifyRequest,
  reply: FastifyReply,
  application: Application,
  values: ReturnType<typeof postedValues>,
  errors: Record<string, string | undefined>,
): Promise<FastifyReply> {
  return renderPage(
    request,
    reply,
    "applications/edit.eta",
    {
      title: `${application.name}: there is a problem`,
      application,
      pressure: await clientAuthenticationPressure(request.server.signon, application),
      values: { ...applicationFormValues(application), ...values, require_pkce: values.require_pkce ?? "", api_only: values.api_only ?? "" },
      errors,
    },
    400,
  );
}

const settingsAnswer = overLongAnswer(EditApplicationBody, applicationFormNouns, async (request, reply, body, errors) => {
  const id = (request.params as { id: string }).id;
  const application = isId(id) ? await findApplicationById(request.server.signon.db, id) : null;
  if (!application) return sendNotFound(request, reply, "application");
  const values = postedValues(application, body);
  return showSettingsErrors(request, reply, application, values, withFormChecks(values, errors, request.server.signon.config));
});

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
      config: { errorFormat: "html", overLong: settingsAnswer },
      schema: { params: Params, body: EditApplicationBody },
      preValidation: requireFormBody,
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
      if (!application) return sendNotFound(request, reply, "application");
      const values = postedValues(application, request.body);
      const showErrors = (errors: Record<string, string | undefined>) => showSettingsErrors(request, reply, application, values, errors);
      const checked = checkApplicationForm(values, app.signon.config, application.supportedPermissions);
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
