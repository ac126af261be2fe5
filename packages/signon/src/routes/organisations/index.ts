import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { AccountError } from "../../accounts/manage-users.js";
import { createOrganisation } from "../../accounts/organisations.js";
import { setOrganisationTwoStepRequired } from "../../accounts/two-step-mandate.js";
import { checkOrganisationFields, updateOrganisation } from "../../accounts/update-organisation.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { countMembers, findOrganisationById, listOrganisationSummaries } from "../../repositories/organisation-admin.js";
import { findOrganisationBySlug } from "../../repositories/organisations.js";
import { isUniqueViolation } from "../../repositories/unique-violation.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { mayManageOrganisations } from "../../web/policy.js";
import { actorOf, guardSection, isId, sendNotFound } from "../../web/admin-section.js";
import { signedInUser } from "../../web/signed-in.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const fields = { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.String({ maxLength: 400 }), slug: Type.String({ maxLength: 200 }) };
const NewOrganisationBody = Type.Object({ ...fields, content_id: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
const EditOrganisationBody = Type.Object(fields, { additionalProperties: false });
const TwoStepBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), required: Type.Union([Type.Literal("yes"), Type.Literal("no")]) },
  { additionalProperties: false },
);

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The organisations section (superadmins only, as `mayManageOrganisations`
 * says): `GET /organisations`, `GET|POST /organisations/new`,
 * `GET|POST /organisations/:id` (name and slug), `POST /organisations/:id/two-step`
 * (whether its people must use 2-step verification).
 */
const organisationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  guardSection(app, mayManageOrganisations);

  app.get("/organisations", { config: { errorFormat: "html" } }, async (request, reply) => {
    const organisations = await listOrganisationSummaries(app.signon.db);
    return renderPage(request, reply, "organisations/list.eta", { title: "Organisations", organisations });
  });

  app.get("/organisations/new", { config: { errorFormat: "html" } }, async (request, reply) =>
    renderPage(request, reply, "organisations/new.eta", { title: "New organisation", values: { name: "", slug: "", content_id: "" }, errors: {} }),
  );

  app.post(
    "/organisations/new",
    { config: { errorFormat: "html" }, schema: { body: NewOrganisationBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { _csrf: _ignored, ...values } = request.body;
      const checked = checkOrganisationFields(values);
      const errors = checked.ok ? {} : { ...checked.errors };
      const contentId = values.content_id.trim();
      if (contentId !== "" && !uuidPattern.test(contentId)) errors.content_id = "Enter a UUID, such as 0b6ad8a4-2f4e-4f7c-9a36-3f1f3e2c6d11, or leave it empty";
      if (checked.ok && (await findOrganisationBySlug(app.signon.db, checked.slug))) errors.slug = `Another organisation has the slug ${checked.slug}`;
      if (!checked.ok || Object.keys(errors).length > 0) {
        return renderPage(request, reply, "organisations/new.eta", { title: "New organisation: there is a problem", values, errors }, 400);
      }
      try {
        const organisation = await createOrganisation(
          app.signon,
          { name: checked.name, slug: checked.slug, contentId: contentId === "" ? undefined : contentId },
          signedInUser(request).uid,
          requestOrigin(request),
        );
        return await redirectWithFlash(request, reply, "/organisations", { kind: "success", text: `${organisation.name} is created.` });
      } catch (error) {
        const message = error instanceof AccountError ? error.message : isUniqueViolation(error) ? `Another organisation has the slug ${checked.slug}` : null;
        if (message === null) throw error;
        return renderPage(request, reply, "organisations/new.eta", { title: "New organisation: there is a problem", values, errors: { slug: message } }, 400);
      }
    },
  );

  app.get("/organisations/:id", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const organisation = isId(request.params.id) ? await findOrganisationById(app.signon.db, request.params.id) : null;
    if (!organisation) return sendNotFound(request, reply, "organisation");
    const userCount = await countMembers(app.signon.db, organisation.id);
    return renderPage(request, reply, "organisations/edit.eta", {
      title: organisation.name,
      organisation,
      userCount,
      values: { name: organisation.name, slug: organisation.slug },
      errors: {},
    });
  });

  app.post(
    "/organisations/:id",
    { config: { errorFormat: "html" }, schema: { params: Params, body: EditOrganisationBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { _csrf: _ignored, ...values } = request.body;
      const result = isId(request.params.id) ? await updateOrganisation(app.signon, request.params.id, values, actorOf(request)) : null;
      if (!result) return sendNotFound(request, reply, "organisation");
      if (!result.ok) {
        const organisation = await findOrganisationById(app.signon.db, request.params.id);
        if (!organisation) return sendNotFound(request, reply, "organisation");
        const userCount = await countMembers(app.signon.db, organisation.id);
        return renderPage(
          request,
          reply,
          "organisations/edit.eta",
          { title: `${organisation.name}: there is a problem`, organisation, userCount, values, errors: result.errors },
          400,
        );
      }
      return redirectWithFlash(request, reply, "/organisations", { kind: "success", text: `${result.organisation.name} is saved.` });
    },
  );

  app.post(
    "/organisations/:id/two-step",
    { config: { errorFormat: "html" }, schema: { params: Params, body: TwoStepBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const organisation = isId(request.params.id) ? await findOrganisationById(app.signon.db, request.params.id) : null;
      const required = request.body.required === "yes";
      const result = organisation ? await setOrganisationTwoStepRequired(app.signon, organisation, required, actorOf(request)) : null;
      if (!result) return sendNotFound(request, reply, "organisation");
      const text = required
        ? `Everyone in ${result.organisation.name} must use 2-step verification. Those without it set it up at their next sign-in.`
        : `${result.organisation.name} no longer requires 2-step verification of its people.`;
      return redirectWithFlash(request, reply, `/organisations/${result.organisation.id}`, { kind: "success", text });
    },
  );
};

export default organisationRoutes;
