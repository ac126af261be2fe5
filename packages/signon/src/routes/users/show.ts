import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { editUser } from "../../accounts/edit-user.js";
import { pendingEmailChange } from "../../accounts/email-change.js";
import { invitationPermissionsOf } from "../../accounts/invitations.js";
import { passkeysOf } from "../../accounts/passkeys/manage.js";
import { lockEndsAt } from "../../accounts/sign-in-limits.js";
import { exemptionRefusal } from "../../accounts/two-step-mandate.js";
import { checkUserForm, type UserFormFields } from "../../accounts/user-form.js";
import type { UserDetails } from "../../accounts/user-details.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { listSyncsOfUser } from "../../repositories/user-application-syncs.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";
import { formatTime, roleLabels } from "./format.js";
import { UserFormBody, userFormNouns } from "./invite.js";
import { errorSummary, managedUser, UidParams, usersFormGuards, usersPageGuards } from "./managed-user.js";
import { userFormChoices } from "./user-form-page.js";

/**
 * The edit form: the invite form's fields, and the administrator's word that
 * they confirmed a new e-mail address with its owner out of band.
 */
const EditUserBody = Type.Object(
  { ...UserFormBody.properties, email_confirmed_out_of_band: Type.Optional(Type.Literal("yes")) },
  { additionalProperties: false },
);

const editAnswer = overLongAnswer(EditUserBody, userFormNouns, async (request, reply, body, errors) => {
  const details = await managedUser(request, reply, (request.params as { uid: string }).uid);
  if (!details) return reply;
  const form: UserFormFields = { name: body.name, email: body.email, role: body.role, organisation: body.organisation };
  return renderUserPage(request, reply, details, { form, errors, outOfBand: body.email_confirmed_out_of_band === "yes" });
});

/** The page about one user: summary, edit form and account actions. */
export async function renderUserPage(
  request: FastifyRequest,
  reply: FastifyReply,
  details: UserDetails,
  options: {
    form?: UserFormFields;
    errors?: Record<string, string>;
    actionErrors?: Record<string, string>;
    outOfBand?: boolean;
    /** The exemption form as it was posted, when it comes back with errors. */
    exemptionForm?: { reason: string; ends_on: string };
  } = {},
): Promise<FastifyReply> {
  const { user } = details;
  const now = request.server.signon.now();
  const [pending, syncs, passkeys] = await Promise.all([
    pendingEmailChange(request.server.signon, user.uid),
    listSyncsOfUser(request.server.signon.db, user.uid),
    passkeysOf(request.server.signon, user),
  ]);
  const onAcceptance = user.passwordHash === null ? await invitationPermissionsOf(request.server.signon, user.uid) : [];
  const actor = signedInUser(request);
  const form = options.form ?? { name: user.name, email: user.email, role: user.role, organisation: user.organisationId ?? "" };
  const errors = { ...(options.errors ?? {}), ...(options.actionErrors ?? {}) };
  const status = Object.keys(errors).length > 0 ? 400 : 200;
  return renderPage(
    request,
    reply,
    "users/show.eta",
    {
      title: user.name,
      person: {
        uid: user.uid,
        name: user.name,
        email: user.email,
        role: roleLabels[user.role] ?? user.role,
        organisationName: details.organisationName,
        status: details.status,
        suspensionReason: user.suspensionReason,
        suspendedAt: formatTime(user.suspendedAt),
        locked: details.locked,
        lockedAt: formatTime(user.lockedAt),
        lockedUntil: user.lockedAt === null ? null : formatTime(lockEndsAt(user.lockedAt)),
        failures: details.failures.map((failure) => ({
          source: failure.source,
          kind: failure.kind === "password" ? "Wrong password" : "Wrong 2-step code",
          failures: failure.failures,
          lastFailedAt: formatTime(failure.lastFailedAt),
          refusedUntil: failure.blockedUntil !== null && failure.blockedUntil.getTime() > now.getTime() ? formatTime(failure.blockedUntil) : null,
        })),
        twoStepOn: details.twoStepOn,
        twoStep: twoStepView(request, details),
        authenticatorApp: user.otpEnabledAt === null ? null : formatTime(user.otpEnabledAt),
        passkeys: passkeys.map((passkey) => ({
          name: passkey.name,
          added: formatTime(passkey.createdAt),
          addedIso: passkey.createdAt.toISOString(),
          lastUsed: passkey.lastUsedAt === null ? null : formatTime(passkey.lastUsedAt),
          lastUsedIso: passkey.lastUsedAt?.toISOString() ?? null,
          synced: passkey.deviceType === "multiDevice",
        })),
        lastSignIn: formatTime(user.lastSignedInAt),
        newPasswordRequired: user.newPasswordRequired,
        isSelf: user.uid === actor.uid,
        suspended: user.suspendedAt !== null,
        invited: user.passwordHash === null && user.suspendedAt === null,
        /** Never set a password (invited, not accepted yet): there is none to replace on unsuspension. */
        hasPassword: user.passwordHash !== null,
        invitationPermissions: onAcceptance,
        pendingEmail: pending ? { to: pending.newEmail, until: formatTime(pending.expiresAt) } : null,
        syncs: syncs.map((sync) => ({
          application: sync.application,
          at: formatTime(sync.lastSyncedAt),
          iso: sync.lastSyncedAt.toISOString(),
          by: sync.lastSyncedBy === "push" ? "a change was pushed to it" : "it fetched the user (/user.json)",
        })),
      },
      outOfBand: options.outOfBand ?? false,
      actionErrors: options.actionErrors ?? {},
      exemptionForm: options.exemptionForm ?? { reason: "", ends_on: "" },
      ...(await userFormChoices(request, form, options.errors ?? {}, user.organisationId)),
      errorSummary: errorSummary(errors),
    },
    status,
  );
}

const sourceWords = { role: "their role", organisation: "their organisation", person: "this person's own requirement" } as const;

/** The 2-step part of the user page: whether it is required and why, the exemption, and what the actor may change. */
function twoStepView(request: FastifyRequest, details: UserDetails) {
  const { twoStepRequirement: requirement, user } = details;
  const actor = signedInUser(request);
  const sources = requirement.sources.map((source) => sourceWords[source]);
  return {
    required: requirement.required,
    sources: sources.length === 0 ? null : sources.join(", "),
    personRequired: user.twoStepRequired,
    exemption:
      requirement.exemption === null
        ? null
        : { reason: requirement.exemption.reason, until: formatTime(requirement.exemption.until), applies: requirement.exemption.applies },
    mayExempt: actor.role === "superadmin",
    exemptionRefusal: exemptionRefusal(request.server.signon.config, user),
  };
}

/**
 * `GET /users/:uid` shows a user; `POST /users/:uid` changes their name,
 * role and organisation at once. A new e-mail address is mailed a
 * confirmation link and changes when its owner follows it, unless the
 * administrator ticks that they confirmed it out of band (then at once,
 * audited as such). Administrators change their own address on their
 * account page, with their password.
 */
const showUserRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/users/:uid", { config: { errorFormat: "html" }, schema: { params: UidParams }, preHandler: usersPageGuards }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    return details ? renderUserPage(request, reply, details) : reply;
  });

  app.post(
    "/users/:uid",
    {
      config: { errorFormat: "html", overLong: editAnswer },
      schema: { params: UidParams, body: EditUserBody },
      preValidation: requireFormBody,
      preHandler: usersFormGuards(app),
    },
    async (request, reply) => {
      const details = await managedUser(request, reply, request.params.uid);
      if (!details) return reply;
      const actor = signedInUser(request);
      const form: UserFormFields = { name: request.body.name, email: request.body.email, role: request.body.role, organisation: request.body.organisation };
      const checked = await checkUserForm(app.signon, actor, form, { email: details.user.email, organisationId: details.user.organisationId });
      if (!checked.ok) return renderUserPage(request, reply, details, { form, errors: checked.errors });
      const target = details.user;
      const outOfBand = request.body.email_confirmed_out_of_band === "yes";
      const result = await editUser(app.signon, target, checked.values, {
        actorUid: actor.uid,
        outOfBand,
        origin: requestOrigin(request),
        // An administrator changing their own details stays signed in here (S18).
        keepSessionIdHash: target.uid === actor.uid ? (request.webSession?.idHash ?? null) : null,
        onMailFailure: (error) => request.log.error({ mailError: mailErrorForLog(error) }, "e-mail change mail could not be sent"),
      });
      if (!result.ok) return renderUserPage(request, reply, details, { form, errors: { email: result.emailError }, outOfBand });
      if (result.confirmationSentTo !== null) {
        const text = `The changes are saved. A confirmation link was sent to ${result.confirmationSentTo}; the e-mail address changes when ${checked.values.name} follows it.`;
        return redirectWithFlash(request, reply, `/users/${target.uid}`, { kind: "success", text });
      }
      return redirectWithFlash(request, reply, `/users/${details.user.uid}`, { kind: "success", text: "The changes are saved." });
    },
  );
};

export default showUserRoutes;
