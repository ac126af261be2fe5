import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { isPasskeyId, maxPasskeysPerUser, passkeyNameMaxLength, passkeysOf, removePasskey } from "../../accounts/passkeys/manage.js";
import { beginPasskeyRegistration, finishPasskeyRegistration, type PasskeyRegistrationResult } from "../../accounts/passkeys/registration.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { findPasskeyOfUser, type Passkey } from "../../repositories/passkeys.js";
import { formatTime } from "../../time-format.js";
import { confirmField, isConfirmed, renderConfirmation, type ConfirmationPage } from "../../web/confirmation.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { requireSignedInForTwoStepSetUp, signedInUser } from "../../web/signed-in.js";

// `_csrf` is optional in the schemas so that a post without it gets the CSRF check's 403, not a 400.
const OptionsBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });
const RegisterBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 256 })),
    name: Type.String({ maxLength: passkeyNameMaxLength }),
    response: Type.String({ maxLength: 12_000 }),
  },
  { additionalProperties: false },
);
const PasskeyParams = Type.Object({ passkeyId: Type.String({ maxLength: 64 }) });
const ConfirmBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })), ...confirmField }, { additionalProperties: false });

const title = "Your passkeys";

const registrationMessages: Record<Exclude<PasskeyRegistrationResult, { ok: true }>["reason"], { field: string; text: string }> = {
  malformed: { field: "add-passkey", text: "Your browser did not create a passkey. Select “Add a passkey” and follow your browser's instructions" },
  unknown_challenge: { field: "add-passkey", text: "That took too long or was already used. Select “Add a passkey” again" },
  not_verified: { field: "add-passkey", text: "That passkey could not be checked. Try again, or use another authenticator" },
  already_registered: { field: "add-passkey", text: "That passkey is registered already" },
  too_many: { field: "add-passkey", text: `You have ${maxPasskeysPerUser} passkeys, the most an account may have. Remove one before adding another` },
};

function passkeyRows(passkeys: readonly Passkey[]) {
  return passkeys.map((passkey) => ({
    id: passkey.id,
    name: passkey.name,
    added: formatTime(passkey.createdAt),
    lastUsed: passkey.lastUsedAt === null ? "Never" : formatTime(passkey.lastUsedAt),
    synced: passkey.deviceType === "multiDevice",
  }));
}

async function showPasskeys(
  request: FastifyRequest,
  reply: FastifyReply,
  form: { name: string; errors: Record<string, string> },
  status = 200,
): Promise<FastifyReply> {
  const user = signedInUser(request);
  const passkeys = await passkeysOf(request.server.signon, user);
  return renderPage(
    request,
    reply,
    "account/passkeys.eta",
    {
      title,
      passkeys: passkeyRows(passkeys),
      values: { name: form.name },
      errors: form.errors,
      nameMaxLength: passkeyNameMaxLength,
      required: request.webSession?.twoStepSetUpRequired ?? false,
    },
    status,
  );
}

const registerAnswer = overLongAnswer(RegisterBody, { name: "a name" }, (request, reply, body, errors) => showPasskeys(request, reply, { name: body.name, errors }, 400));

function removeConfirmation(passkey: Passkey, last: boolean): ConfirmationPage {
  return {
    title: `Remove the passkey “${passkey.name}”`,
    consequences: [
      `The passkey “${passkey.name}” no longer signs you in to Tessera Sign-on, neither as a second step nor on its own.`,
      last
        ? "It is your last passkey: unless you use an authenticator app, your sign-in goes back to a password alone."
        : "Your other passkeys keep working.",
      "The passkey stays on your device or in your password manager; you can delete it there too.",
    ],
    finality: "This cannot be undone: to use that authenticator again, add it as a new passkey.",
    action: `/account/passkeys/${passkey.id}/remove`,
    confirmLabel: `Remove “${passkey.name}”`,
    cancel: { href: "/account/passkeys", label: "Cancel: back to your passkeys" },
  };
}

async function ownPasskeyOrNotFound(request: FastifyRequest, reply: FastifyReply, id: string): Promise<Passkey | null> {
  const passkey = isPasskeyId(id) ? await findPasskeyOfUser(request.server.signon.db, signedInUser(request).uid, id) : null;
  if (!passkey) {
    await renderPage(request, reply, "error.eta", { title: "Page not found", message: "You have no passkey with that address: it may have been removed already." }, 404);
    return null;
  }
  return passkey;
}

/**
 * The person's passkeys: `GET /account/passkeys` lists them (name, when
 * added, when last used) with the form to add one; `POST
 * /account/passkeys/options` hands the browser script the options of a new
 * registration (JSON); `POST /account/passkeys` checks the browser's answer
 * and stores the passkey under its name; `GET/POST
 * /account/passkeys/:passkeyId/remove` removes one, after a confirmation step. A
 * person who must set up 2-step verification may use these pages too: a
 * passkey meets the requirement.
 */
const passkeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/account/passkeys", { config: { errorFormat: "html" }, preHandler: requireSignedInForTwoStepSetUp }, async (request, reply) =>
    showPasskeys(request, reply, { name: "", errors: {} }),
  );

  app.post(
    "/account/passkeys/options",
    { schema: { body: OptionsBody }, preHandler: [requireSignedInForTwoStepSetUp, app.csrfProtection] },
    async (request, reply) => {
      const session = request.webSession;
      if (!session) throw new Error("requireSignedIn set no session");
      const options = await beginPasskeyRegistration(app.signon, session.user, session.idHash);
      return reply.header("cache-control", "no-store").send(options);
    },
  );

  app.post(
    "/account/passkeys",
    {
      config: { errorFormat: "html", overLong: registerAnswer },
      schema: { body: RegisterBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedInForTwoStepSetUp, app.csrfProtection],
    },
    async (request, reply) => {
      const session = request.webSession;
      if (!session) throw new Error("requireSignedIn set no session");
      const name = request.body.name.trim();
      if (name === "") return showPasskeys(request, reply, { name, errors: { name: "Enter a name for the passkey, such as the device it is on" } }, 400);
      if (name.length > passkeyNameMaxLength) {
        return showPasskeys(request, reply, { name, errors: { name: `Enter a name of at most ${passkeyNameMaxLength} characters` } }, 400);
      }
      const result = await finishPasskeyRegistration(app.signon, session.user, session.idHash, { name, response: request.body.response }, requestOrigin(request));
      if (!result.ok) {
        const message = registrationMessages[result.reason];
        return showPasskeys(request, reply, { name, errors: { [message.field]: message.text } }, result.reason === "not_verified" ? 401 : 400);
      }
      return redirectWithFlash(request, reply, "/account/passkeys", { kind: "success", text: `The passkey “${result.name}” is added. You can use it to sign in.` });
    },
  );

  app.get(
    "/account/passkeys/:passkeyId/remove",
    { config: { errorFormat: "html" }, schema: { params: PasskeyParams }, preHandler: requireSignedInForTwoStepSetUp },
    async (request, reply) => {
      const passkey = await ownPasskeyOrNotFound(request, reply, request.params.passkeyId);
      if (!passkey) return reply;
      return renderConfirmation(request, reply, removeConfirmation(passkey, signedInUser(request).passkeyCount <= 1));
    },
  );

  app.post(
    "/account/passkeys/:passkeyId/remove",
    {
      config: { errorFormat: "html" },
      schema: { params: PasskeyParams, body: ConfirmBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedInForTwoStepSetUp, app.csrfProtection],
    },
    async (request, reply) => {
      const passkey = await ownPasskeyOrNotFound(request, reply, request.params.passkeyId);
      if (!passkey) return reply;
      const user = signedInUser(request);
      if (!isConfirmed(request.body)) return renderConfirmation(request, reply, removeConfirmation(passkey, user.passkeyCount <= 1), { unconfirmed: true });
      const removed = await removePasskey(app.signon, user, passkey.id, requestOrigin(request));
      if (!removed) return ownPasskeyOrNotFound(request, reply, passkey.id).then(() => reply);
      return redirectWithFlash(request, reply, "/account/passkeys", { kind: "success", text: `The passkey “${removed.name}” is removed.` });
    },
  );
};

export default passkeyRoutes;
