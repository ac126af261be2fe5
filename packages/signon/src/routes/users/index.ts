import type { FastifyPluginAsync } from "fastify";
import accountActionRoutes from "./account-actions.js";
import inviteUserRoutes from "./invite.js";
import userListRoutes from "./list.js";
import showUserRoutes from "./show.js";

/** The users pages for administrators: list and CSV, invite, one user's page and its actions, permissions and event log. */
const usersRoutes: FastifyPluginAsync = async (app) => {
  await app.register(userListRoutes);
  await app.register(inviteUserRoutes);
  await app.register(showUserRoutes);
  await app.register(accountActionRoutes);
};

export default usersRoutes;
