import type { FastifyPluginAsync } from "fastify";
import accountActionRoutes from "./account-actions.js";
import userEmailChangeRoutes from "./email-change.js";
import userEventRoutes from "./events.js";
import inviteUserRoutes from "./invite.js";
import inviteBatchRoutes from "./invite-batch.js";
import userListRoutes from "./list.js";
import userPermissionRoutes from "./permissions.js";
import resetTwoStepRoutes from "./reset-two-step.js";
import showUserRoutes from "./show.js";
import suspendUserRoutes from "./suspend.js";
import twoStepRequirementRoutes from "./two-step-requirement.js";

/** The users pages for administrators: list and CSV, invite, one user's page and its actions, permissions, event log and 2-step requirement. */
const usersRoutes: FastifyPluginAsync = async (app) => {
  await app.register(userListRoutes);
  await app.register(inviteUserRoutes);
  await app.register(inviteBatchRoutes);
  await app.register(showUserRoutes);
  await app.register(userEmailChangeRoutes);
  await app.register(accountActionRoutes);
  await app.register(suspendUserRoutes);
  await app.register(resetTwoStepRoutes);
  await app.register(userPermissionRoutes);
  await app.register(userEventRoutes);
  await app.register(twoStepRequirementRoutes);
};

export default usersRoutes;
