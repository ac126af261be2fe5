import type { FastifyPluginAsync } from "fastify";
import accountActionRoutes from "./account-actions.js";
import userEventRoutes from "./events.js";
import inviteUserRoutes from "./invite.js";
import userListRoutes from "./list.js";
import userPermissionRoutes from "./permissions.js";
import resetTwoStepRoutes from "./reset-two-step.js";
import showUserRoutes from "./show.js";
import suspendUserRoutes from "./suspend.js";

/** The users pages for administrators: list and CSV, invite, one user's page and its actions, permissions and event log. */
const usersRoutes: FastifyPluginAsync = async (app) => {
  await app.register(userListRoutes);
  await app.register(inviteUserRoutes);
  await app.register(showUserRoutes);
  await app.register(accountActionRoutes);
  await app.register(suspendUserRoutes);
  await app.register(resetTwoStepRoutes);
  await app.register(userPermissionRoutes);
  await app.register(userEventRoutes);
};

export default usersRoutes;
