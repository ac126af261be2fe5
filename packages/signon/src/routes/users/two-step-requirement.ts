import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  checkExemption,
  exemptFromTwoStep,
  exemptionReasonMaxLength,
  exemptionRefusal,
  removeTwoStepExemption,
  setPersonTwoStepRequired,
} from "../../accounts/two-step-mandate.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { actorOf } from "../../web/admin-section.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash } from "../../web/page.js";
import { sendForbidden, signedInUser } from "../../web/signed-in.js";
import { formatTime } from "./format.js";
import { managedUser, UidParams, usersFormGuards } from "./managed-user.js";
import { renderUserPage } from "./show.js";

const RequirementBody = Type.Object(
  { _csrf: Type.String({ maxLength: 256 }), required: Type.Union([Type.Literal("yes"), Type.Literal("no")]) },
  { additionalProperties: false },
);
const ExemptionBody = Type.Object(
  { _csrf: Type.String({ maxLength: 256 }), reason: Type.String({ maxLength: exemptionReasonMaxLength }), ends_on: Type.String({ maxLength: 40 }) },
  { additionalProperties: false },
);
const CsrfOnlyBody = Type.Object({ _csrf: Type.String({ maxLength: 256 }) }, { additionalProperties: false });

/** The exemption form again, on the user page; its fields' ids are `exemption-…`. */
const exemptionAnswer = overLongAnswer(ExemptionBody, { reason: "a reason" }, async (request, reply, body, errors) => {
  const details = await managedUser(request, reply, (request.params as { uid: string }).uid);
  if (!details) return reply;
  if (signedInUser(request).role !== "superadmin") return sendForbidden(reply);
  const actionErrors = Object.fromEntries(Object.entries(errors).map(([field, message]) => [`exemption-${field}`, message]));
  return renderUserPage(request, reply, details, { actionErrors, exemptionForm: { reason: body.reason, ends_on: body.ends_on } });
});

/**
 * The 2-step forms of the user page: `POST /users/:uid/two-step-requirement`
 * requires 2-step verification of the person or stops requiring it (anyone
 * who may manage them); `POST /users/:uid/two-step-exemption` exempts them
 * with a reason until a day, and `POST /users/:uid/two-step-exemption/remove`
 * ends the exemption (superadmins only).
 */
const twoStepRequirementRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const options = { config: { errorFormat: "html" as const }, preValidation: requireFormBody, preHandler: usersFormGuards(app) };

  app.post("/users/:uid/two-step-requirement", { ...options, schema: { params: UidParams, body: RequirementBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    const required = request.body.required === "yes";
    await setPersonTwoStepRequired(app.signon, details.user, required, actorOf(request));
    const text = required
      ? `${details.user.name} must use 2-step verification.${details.twoStepOn ? "" : " They set it up at their next sign-in."}`
      : `${details.user.name} is no longer required to use 2-step verification by this setting.`;
    return redirectWithFlash(request, reply, `/users/${details.user.uid}`, { kind: "success", text });
  });

  app.post("/users/:uid/two-step-exemption", { ...options, config: { ...options.config, overLong: exemptionAnswer }, schema: { params: UidParams, body: ExemptionBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    if (signedInUser(request).role !== "superadmin") {
      await sendForbidden(reply);
      return reply;
    }
    const exemptionForm = { reason: request.body.reason, ends_on: request.body.ends_on };
    const refusal = exemptionRefusal(app.signon.config, details.user);
    if (refusal !== null) return renderUserPage(request, reply, details, { actionErrors: { "two-step-exemption": refusal }, exemptionForm });
    const checked = checkExemption({ reason: request.body.reason, endsOn: request.body.ends_on }, app.signon.now());
    if (!checked.ok) {
      const actionErrors: Record<string, string> = {};
      if (checked.errors.reason !== undefined) actionErrors["exemption-reason"] = checked.errors.reason;
      if (checked.errors.ends_on !== undefined) actionErrors["exemption-ends-on"] = checked.errors.ends_on;
      return renderUserPage(request, reply, details, { actionErrors, exemptionForm });
    }
    await exemptFromTwoStep(app.signon, details.user, { reason: checked.reason, until: checked.until }, actorOf(request));
    return redirectWithFlash(request, reply, `/users/${details.user.uid}`, {
      kind: "success",
      text: `${details.user.name} is exempt from 2-step verification until ${formatTime(checked.until)}.`,
    });
  });

  app.post("/users/:uid/two-step-exemption/remove", { ...options, schema: { params: UidParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    if (signedInUser(request).role !== "superadmin") {
      await sendForbidden(reply);
      return reply;
    }
    if (!(await removeTwoStepExemption(app.signon, details.user, actorOf(request)))) {
      return renderUserPage(request, reply, details, { actionErrors: { "remove-two-step-exemption": `${details.user.name} has no exemption` } });
    }
    return redirectWithFlash(request, reply, `/users/${details.user.uid}`, { kind: "success", text: `${details.user.name} is no longer exempt from 2-step verification.` });
  });
};

export default twoStepRequirementRoutes;
