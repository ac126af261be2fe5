import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { permissionGrid, savePermissionGrid } from "../../accounts/permission-grid.js";
import type { UserDetails } from "../../accounts/user-details.js";
import { fieldValues } from "../../http/form-body.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { sendForbidden, signedInUser } from "../../web/signed-in.js";
import { managedUser, UidParams, usersFormGuards, usersPageGuards } from "./managed-user.js";

const boxValue = Type.String({ maxLength: 200 });
const PermissionsBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    permissions: Type.Optional(Type.Union([boxValue, Type.Array(boxValue, { maxItems: 1000 })])),
    /** `yes` from the page's form: `shown_held` lists the boxes it showed ticked, and only what was changed on it is saved. */
    shown: Type.Optional(Type.Literal("yes")),
    shown_held: Type.Optional(Type.Union([boxValue, Type.Array(boxValue, { maxItems: 1000 })])),
  },
  { additionalProperties: false },
);

async function renderGrid(request: FastifyRequest, reply: FastifyReply, details: UserDetails, problem?: string): Promise<FastifyReply> {
  const grid = await permissionGrid(request.server.signon, signedInUser(request), details.user.uid);
  return renderPage(
    request,
    reply,
    "users/permissions.eta",
    {
      title: `Permissions of ${details.user.name}`,
      person: { uid: details.user.uid, name: details.user.name },
      grid,
      errorSummary: problem === undefined ? [] : [{ field: "permissions-form", message: problem }],
    },
    problem === undefined ? 200 : 400,
  );
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * `GET /users/:uid/permissions`: a grid of checkboxes, one fieldset per live
 * application; only the permissions the actor may grant can be changed.
 * `POST` grants what was ticked and revokes what was cleared on the form,
 * leaving what changed elsewhere since the page was shown as it is.
 */
const userPermissionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/users/:uid/permissions", { config: { errorFormat: "html" }, schema: { params: UidParams }, preHandler: usersPageGuards }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    return details ? renderGrid(request, reply, details) : reply;
  });

  app.post(
    "/users/:uid/permissions",
    {
      config: { errorFormat: "html" },
      schema: { params: UidParams, body: PermissionsBody },
      preValidation: requireFormBody,
      preHandler: usersFormGuards(app),
    },
    async (request, reply) => {
      const details = await managedUser(request, reply, request.params.uid);
      if (!details) return reply;
      const { permissions, shown, shown_held: shownHeld } = request.body;
      const heldWhenShown = shown === "yes" ? fieldValues(shownHeld) : undefined;
      const result = await savePermissionGrid(app.signon, signedInUser(request), details.user, fieldValues(permissions), requestOrigin(request), heldWhenShown);
      if (!result.ok && result.reason === "not_grantable") {
        await sendForbidden(reply);
        return reply;
      }
      if (!result.ok) return renderGrid(request, reply, details, "The form listed a permission that is not on this page. Reload the page and try again.");
      const text =
        result.granted + result.revoked === 0
          ? "No permissions changed."
          : `Permissions saved: ${plural(result.granted, "permission")} granted, ${plural(result.revoked, "permission")} revoked.`;
      return redirectWithFlash(request, reply, `/users/${details.user.uid}/permissions`, { kind: "success", text });
    },
  );
};

export default userPermissionRoutes;
