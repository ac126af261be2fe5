import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { withAdministrationScope } from "../../accounts/administration-scope.js";
import { startInvitationBatch, summariseBatchChoice } from "../../accounts/invitation-batches.js";
import { BatchFileError, batchFileMaxBytes, batchFileMaxRows, readBatchFile } from "../../accounts/invitation-csv.js";
import { checkInvitation, invitationGrid } from "../../accounts/invitations.js";
import { AccountError, type Role } from "../../accounts/manage-users.js";
import { choosesOrganisation, organisationChoices } from "../../accounts/user-form.js";
import { fieldValues } from "../../http/form-body.js";
import { uploadedFile, registerMultipartParser } from "../../http/multipart-body.js";
import { requestOrigin } from "../../http/request-origin.js";
import { InvalidRequestError } from "../../oauth/errors.js";
import { countBatchOutcomes, findInvitationBatch, listInvitationBatchRows } from "../../repositories/invitation-batches.js";
import { findUserByUid } from "../../repositories/users.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { renderPage } from "../../web/page.js";
import { assignableRoles, mayAssignOrganisation } from "../../web/policy.js";
import { signedInUser } from "../../web/signed-in.js";
import { roleLabels } from "./format.js";
import { errorSummary, usersFormGuards, usersPageGuards } from "./managed-user.js";

const field = Type.String({ maxLength: 200 });
const BatchBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    role: Type.String({ maxLength: 50 }),
    organisation: Type.Optional(Type.String({ maxLength: 100 })),
    permissions: Type.Optional(Type.Union([field, Type.Array(field, { maxItems: 1000 })])),
    /** The name of the uploaded file (its bytes come through `uploadedFile`). */
    file: Type.Optional(Type.String({ maxLength: 1000 })),
    /** Rows pasted instead of a file. */
    rows: Type.Optional(Type.String({ maxLength: batchFileMaxBytes })),
  },
  { additionalProperties: false },
);
const BatchParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface BatchForm {
  role: string;
  organisation: string;
  permissions: readonly string[];
  rows: string;
}

async function renderBatchForm(request: FastifyRequest, reply: FastifyReply, form: BatchForm, errors: Record<string, string> = {}, status?: number) {
  const actor = signedInUser(request);
  const db = request.server.signon.db;
  return renderPage(
    request,
    reply,
    "users/invite-batch.eta",
    {
      title: "Invite people from a CSV file",
      form,
      roles: assignableRoles(actor),
      roleLabels,
      choosesOrganisation: choosesOrganisation(actor),
      // "No organisation" only for those who may leave people without one (not a super organisation admin).
      offersNoOrganisation: mayAssignOrganisation(actor, null),
      // The open organisations this actor may assign, as on the single invitation form.
      organisations: choosesOrganisation(actor) ? await organisationChoices(request.server.signon, actor) : [],
      grid: await invitationGrid(db, actor, form.permissions),
      maxKib: batchFileMaxBytes / 1024,
      // The rows pasted are held to the schema's limit, in characters.
      maxRowsLength: batchFileMaxBytes,
      maxRows: batchFileMaxRows,
      errors,
      errorSummary: errorSummary(errors),
    },
    status ?? (Object.keys(errors).length > 0 ? 400 : 200),
  );
}

const batchAnswer = overLongAnswer(BatchBody, { rows: { noun: "pasted rows", unit: "characters in all" } }, (request, reply, body, errors) =>
  renderBatchForm(request, reply, { role: body.role, organisation: body.organisation ?? "", permissions: fieldValues(body.permissions), rows: body.rows ?? "" }, errors),
);

/** `preValidation`: the batch form comes as `multipart/form-data` (with a file) or as a plain form (rows pasted). */
async function requireBatchBody(request: FastifyRequest): Promise<void> {
  const type = String(request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if ((type !== "multipart/form-data" && type !== "application/x-www-form-urlencoded") || typeof request.body !== "object" || request.body === null) {
    throw new InvalidRequestError("The body must be multipart/form-data or application/x-www-form-urlencoded");
  }
}

/**
 * Batch invitations: `GET /users/invite-batch` shows the form (a CSV file,
 * or rows pasted, and the role, organisation and permissions given to every
 * row); `POST` checks the file, stores the batch for the batch job and
 * opens its page; `GET /users/invite-batch/:id` shows each row's outcome and
 * refreshes itself while rows are waiting. A batch's page is shown to the
 * administrator who started it and to superadmins and admins.
 */
const inviteBatchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Room for the largest file accepted and the form's other fields; a larger body is refused before it is read whole.
  registerMultipartParser(app, 4 * batchFileMaxBytes);

  app.get("/users/invite-batch", { config: { errorFormat: "html" }, preHandler: usersPageGuards }, async (request, reply) => {
    const actor = signedInUser(request);
    // Where "No organisation" is not offered, the administrator's own organisation is chosen to begin with.
    const organisation = mayAssignOrganisation(actor, null) ? "" : (actor.organisationId ?? "");
    return renderBatchForm(request, reply, { role: "normal", organisation, permissions: [], rows: "" });
  });

  app.post(
    "/users/invite-batch",
    {
      config: { errorFormat: "html", overLong: batchAnswer },
      schema: { body: BatchBody },
      preValidation: requireBatchBody,
      preHandler: usersFormGuards(app),
    },
    async (request, reply) => {
      const actor = signedInUser(request);
      const body = request.body;
      const sent = body.permissions;
      const permissions = fieldValues(sent);
      const form: BatchForm = { role: body.role, organisation: body.organisation ?? "", permissions, rows: body.rows ?? "" };
      const file = uploadedFile(request, "file");
      const bytes = file !== undefined && file.byteLength > 0 ? file : form.rows.trim() !== "" ? Buffer.from(form.rows, "utf8") : null;
      if (bytes === null) return renderBatchForm(request, reply, form, { file: "Choose a CSV file, or paste the rows" });
      let rows;
      try {
        rows = readBatchFile(bytes);
      } catch (error) {
        if (error instanceof BatchFileError) return renderBatchForm(request, reply, form, { file: error.message }, error.status);
        throw error;
      }
      if (!(assignableRoles(actor) as readonly string[]).includes(form.role)) return renderBatchForm(request, reply, form, { role: "Choose one of the roles listed" });
      const organisationId = choosesOrganisation(actor) ? (form.organisation === "" ? null : form.organisation) : actor.organisationId;
      if (organisationId !== null && !uuidPattern.test(organisationId)) return renderBatchForm(request, reply, form, { organisation: "Choose one of the organisations listed" });
      const choice = { role: form.role as Role, organisationId, permissions };
      const found = await findUserByUid(app.signon.db, actor.uid);
      const inviter = found && (await withAdministrationScope(app.signon.db, found));
      try {
        if (!inviter) throw new AccountError("You cannot invite users");
        await checkInvitation(app.signon.db, { email: "", name: "", ...choice }, inviter);
        const id = await startInvitationBatch(app.signon, inviter, choice, rows, requestOrigin(request));
        return reply.redirect(`/users/invite-batch/${id}`, 303);
      } catch (error) {
        if (!(error instanceof AccountError)) throw error;
        // "<name> is closed" (an organisation closed since the form was loaded) is about the organisation too.
        const fieldName = /organisation| is closed: nobody new can join it$/i.test(error.message) ? "organisation" : /role/i.test(error.message) ? "role" : "permissions";
        return renderBatchForm(request, reply, form, { [fieldName]: error.message });
      }
    },
  );

  app.get("/users/invite-batch/:id", { config: { errorFormat: "html" }, schema: { params: BatchParams }, preHandler: usersPageGuards }, async (request, reply) => {
    const actor = signedInUser(request);
    const { id } = request.params;
    const batch = uuidPattern.test(id) ? await findInvitationBatch(app.signon.db, id.toLowerCase()) : null;
    const visible = batch !== null && (batch.createdByUid === actor.uid || actor.role === "superadmin" || actor.role === "admin");
    if (!batch || !visible) {
      return renderPage(request, reply, "error.eta", { title: "Page not found", message: "There is no batch of invitations at this address." }, 404);
    }
    const [rows, counts, choice] = await Promise.all([
      listInvitationBatchRows(app.signon.db, batch.id),
      countBatchOutcomes(app.signon.db, batch.id),
      summariseBatchChoice(app.signon.db, batch),
    ]);
    return renderPage(request, reply, "users/invite-batch-job.eta", {
      title: "Batch invitation",
      batch: { id: batch.id, role: roleLabels[batch.role] ?? batch.role, finished: batch.finishedAt !== null, ...choice },
      rows,
      counts,
      total: rows.length,
      ...(batch.finishedAt === null ? { refreshSeconds: 2 } : {}),
    });
  });
};

export default inviteBatchRoutes;
