import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { AccountError } from "../../accounts/manage-users.js";
import { ParentRefusedError } from "../../accounts/organisation-tree.js";
import { createOrganisation } from "../../accounts/organisations.js";
import { setOrganisationTwoStepRequired } from "../../accounts/two-step-mandate.js";
import { checkOrganisationFields, organisationFieldLimits, updateOrganisation } from "../../accounts/update-organisation.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FieldErrors } from "../../applications/application-fields.js";
import type { SignonDatabase } from "../../db/database.js";
import { countMembers, findOrganisationById, listOrganisationSummaries, type OrganisationSummary } from "../../repositories/organisation-admin.js";
import { findOrganisationBySlug, listOrganisationSubtreeIds, type Organisation } from "../../repositories/organisations.js";
import { isUniqueViolation } from "../../repositories/unique-violation.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { mayManageOrganisations } from "../../web/policy.js";
import { actorOf, guardSection, isId, sendNotFound } from "../../web/admin-section.js";
import { signedInUser } from "../../web/signed-in.js";
import { readingContext } from "../../context.js";
import { ownRecentChange } from "../../http/recent-write-cookie.js";
import { registerForDisplay } from "../../accounts/organisation-register/fetch-organisation-register.js";
import { readRegisterState } from "../../repositories/organisation-register.js";
import type { SignonConfig } from "../../config.js";
import { formatTime } from "../../time-format.js";
import { identityProviderRoutes } from "./identity-provider.js";
import { findIdentityProviderOfOrganisation } from "../../repositories/identity-providers.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const fields = {
  _csrf: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.String({ maxLength: organisationFieldLimits.name }),
  slug: Type.String({ maxLength: organisationFieldLimits.slug }),
  /** An organisation id, or empty for none; absent keeps the parent as it is. */
  parent: Type.Optional(Type.String({ maxLength: 64 })),
  closed: Type.Optional(Type.Literal("yes")),
};
// A content id is a UUID: 36 characters.
const NewOrganisationBody = Type.Object({ ...fields, content_id: Type.String({ maxLength: 36 }) }, { additionalProperties: false });
const EditOrganisationBody = Type.Object(fields, { additionalProperties: false });
const TwoStepBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), required: Type.Union([Type.Literal("yes"), Type.Literal("no")]) },
  { additionalProperties: false },
);

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The organisations offered as parent of `organisationId` (all of them for a new one): never itself or one under it. */
async function parentChoices(db: SignonDatabase, organisationId: string | null): Promise<OrganisationSummary[]> {
  const all = await listOrganisationSummaries(db);
  const below = organisationId === null ? [] : await listOrganisationSubtreeIds(db, organisationId);
  return all.filter((organisation) => !below.includes(organisation.id));
}

/** What the organisations page says of the register, when one is configured: where, how often, the last fetch and the latest failure. */
async function registerStatus(db: SignonDatabase, config: SignonConfig) {
  const { url, intervalMs } = config.organisationRegister;
  if (url === null) return null;
  const state = await readRegisterState(db);
  const minutes = intervalMs / 60_000;
  const at = (time: Date) => ({ iso: time.toISOString(), text: formatTime(time) });
  return {
    url: registerForDisplay(url),
    every: minutes % 60 === 0 ? `${minutes / 60} ${minutes === 60 ? "hour" : "hours"}` : `${minutes} ${minutes === 1 ? "minute" : "minutes"}`,
    lastSuccess: state.lastSuccessAt === null ? null : { ...at(state.lastSuccessAt), summary: state.lastSummary },
    failure: state.lastError === null || state.lastFailureAt === null ? null : { ...at(state.lastFailureAt), error: state.lastError },
  };
}

/** The edit page of an organisation, with `values` and `errors` of a refused post. */
async function renderEditPage(
  request: FastifyRequest,
  reply: FastifyReply,
  organisation: Organisation,
  values: { name: string; slug: string; parent: string; closed: string },
  errors: FieldErrors,
): Promise<FastifyReply> {
  const db = request.server.signon.db;
  const [userCount, choices] = await Promise.all([countMembers(db, organisation.id), parentChoices(db, organisation.id)]);
  const parent = organisation.parentId === null ? null : await findOrganisationById(db, organisation.parentId);
  const identityProvider = await findIdentityProviderOfOrganisation(db, organisation.id);
  const failed = Object.keys(errors).length > 0;
  return renderPage(
    request,
    reply,
    "organisations/edit.eta",
    { title: failed ? `${organisation.name}: there is a problem` : organisation.name, organisation, userCount, parentName: parent?.name ?? null, parentChoices: choices, identityProvider, values, errors },
    failed ? 400 : 200,
  );
}

/** The messages of the name and slug's own checks, and `errors` over them: a form shown again for over-long values says what else is wrong too. */
function withFieldChecks(values: { name: string; slug: string }, errors: Record<string, string>): FieldErrors {
  const checked = checkOrganisationFields(values);
  return { ...(checked.ok ? {} : checked.errors), ...errors };
}

const organisationNouns = { name: "a name", slug: "a slug" };

const newOrganisationAnswer = overLongAnswer(NewOrganisationBody, { ...organisationNouns, content_id: "a content id" }, async (request, reply, body, errors) => {
  const { _csrf: _ignored, ...posted } = body;
  const values = { ...posted, parent: posted.parent ?? "", closed: posted.closed ?? "" };
  const parentChoicesShown = await parentChoices(request.server.signon.db, null);
  return renderPage(
    request,
    reply,
    "organisations/new.eta",
    { title: "New organisation: there is a problem", values, parentChoices: parentChoicesShown, errors: withFieldChecks(values, errors) },
    400,
  );
});

const editOrganisationAnswer = overLongAnswer(EditOrganisationBody, organisationNouns, async (request, reply, body, errors) => {
  const id = (request.params as { id: string }).id;
  const organisation = isId(id) ? await findOrganisationById(request.server.signon.db, id) : null;
  if (!organisation) return sendNotFound(request, reply, "organisation");
  const values = { name: body.name, slug: body.slug, parent: body.parent ?? organisation.parentId ?? "", closed: body.closed ?? "" };
  return renderEditPage(request, reply, organisation, values, withFieldChecks(values, errors));
});

function parentField(parent: string | undefined): { ok: true; value: string | undefined } | { ok: false } {
  if (parent === undefined) return { ok: true, value: undefined };
  const trimmed = parent.trim();
  return trimmed === "" || uuidPattern.test(trimmed) ? { ok: true, value: trimmed.toLowerCase() } : { ok: false };
}

/**
 * The organisations section (superadmins only, as `mayManageOrganisations`
 * says): `GET /organisations`, `GET|POST /organisations/new`,
 * `GET|POST /organisations/:id` (name, slug, parent, closed), `POST /organisations/:id/two-step`
 * (whether its people must use 2-step verification), and its identity provider (`identity-provider.ts`).
 */
const organisationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  guardSection(app, mayManageOrganisations);
  await app.register(identityProviderRoutes);

  app.get("/organisations", { config: { errorFormat: "html", listRead: true } }, async (request, reply) => {
    const organisations = await listOrganisationSummaries(readingContext(app.signon, ownRecentChange(request, app.signon.config)).db);
    const names = new Map(organisations.map((organisation) => [organisation.id, organisation.name]));
    return renderPage(request, reply, "organisations/list.eta", {
      title: "Organisations",
      register: await registerStatus(app.signon.db, app.signon.config),
      organisations: organisations.map((organisation) => ({ ...organisation, parentName: organisation.parentId === null ? null : (names.get(organisation.parentId) ?? null) })),
    });
  });

  app.get("/organisations/new", { config: { errorFormat: "html" } }, async (request, reply) =>
    renderPage(request, reply, "organisations/new.eta", {
      title: "New organisation",
      values: { name: "", slug: "", content_id: "", parent: "", closed: "" },
      parentChoices: await parentChoices(app.signon.db, null),
      errors: {},
    }),
  );

  app.post(
    "/organisations/new",
    { config: { errorFormat: "html", overLong: newOrganisationAnswer }, schema: { body: NewOrganisationBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { _csrf: _ignored, ...body } = request.body;
      const values = { ...body, parent: body.parent ?? "", closed: body.closed ?? "" };
      const checked = checkOrganisationFields(values);
      const errors = checked.ok ? {} : { ...checked.errors };
      const contentId = values.content_id.trim();
      if (contentId !== "" && !uuidPattern.test(contentId)) errors.content_id = "Enter a UUID, such as 0b6ad8a4-2f4e-4f7c-9a36-3f1f3e2c6d11, or leave it empty";
      const parent = parentField(values.parent);
      if (!parent.ok) errors.parent = "Choose one of the organisations listed";
      if (checked.ok && (await findOrganisationBySlug(app.signon.db, checked.slug))) errors.slug = `Another organisation has the slug ${checked.slug}`;
      const refused = async (shown: FieldErrors) =>
        renderPage(request, reply, "organisations/new.eta", { title: "New organisation: there is a problem", values, parentChoices: await parentChoices(app.signon.db, null), errors: shown }, 400);
      if (!checked.ok || !parent.ok || Object.keys(errors).length > 0) return refused(errors);
      try {
        const organisation = await createOrganisation(
          app.signon,
          { name: checked.name, slug: checked.slug, contentId: contentId === "" ? undefined : contentId, parentId: parent.value || null, closed: values.closed === "yes" },
          signedInUser(request).uid,
          requestOrigin(request),
        );
        return await redirectWithFlash(request, reply, "/organisations", { kind: "success", text: `${organisation.name} is created.` });
      } catch (error) {
        if (error instanceof ParentRefusedError) return refused({ parent: error.message });
        const message = error instanceof AccountError ? error.message : isUniqueViolation(error) ? `Another organisation has the slug ${checked.slug}` : null;
        if (message === null) throw error;
        return refused({ slug: message });
      }
    },
  );

  app.get("/organisations/:id", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const organisation = isId(request.params.id) ? await findOrganisationById(app.signon.db, request.params.id) : null;
    if (!organisation) return sendNotFound(request, reply, "organisation");
    const values = { name: organisation.name, slug: organisation.slug, parent: organisation.parentId ?? "", closed: organisation.closed ? "yes" : "" };
    return renderEditPage(request, reply, organisation, values, {});
  });

  app.post(
    "/organisations/:id",
    { config: { errorFormat: "html", overLong: editOrganisationAnswer }, schema: { params: Params, body: EditOrganisationBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { _csrf: _ignored, ...body } = request.body;
      const parent = parentField(body.parent);
      const input = { name: body.name, slug: body.slug, parent: parent.ok ? parent.value : undefined, closed: body.closed === "yes" };
      const result = !isId(request.params.id)
        ? null
        : parent.ok
          ? await updateOrganisation(app.signon, request.params.id, input, actorOf(request))
          : ({ ok: false, errors: { parent: "Choose one of the organisations listed" } } as const);
      if (!result) return sendNotFound(request, reply, "organisation");
      if (!result.ok) {
        const organisation = await findOrganisationById(app.signon.db, request.params.id);
        if (!organisation) return sendNotFound(request, reply, "organisation");
        const values = { name: body.name, slug: body.slug, parent: body.parent ?? organisation.parentId ?? "", closed: body.closed ?? "" };
        return renderEditPage(request, reply, organisation, values, result.errors);
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
