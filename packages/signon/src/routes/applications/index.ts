import type { FastifyPluginAsync } from "fastify";
import { mayManageApplications } from "../../web/policy.js";
import applicationCreateRoutes from "./create.js";
import applicationEditRoutes from "./edit.js";
import applicationEventRoutes from "./events.js";
import { guardSection } from "../../web/admin-section.js";
import applicationListRoutes from "./list.js";
import applicationPushRoutes from "./pushes.js";
import applicationSecretAndRetireRoutes from "./secret-and-retire.js";
import applicationUsageRoutes from "./usage.js";

/** The applications section (superadmins): list, create, edit, rotate the secret, retire, push delivery status, use, event log. */
const applicationRoutes: FastifyPluginAsync = async (app) => {
  guardSection(app, mayManageApplications);
  await app.register(applicationListRoutes);
  await app.register(applicationCreateRoutes);
  await app.register(applicationEditRoutes);
  await app.register(applicationSecretAndRetireRoutes);
  await app.register(applicationPushRoutes);
  await app.register(applicationUsageRoutes);
  await app.register(applicationEventRoutes);
  await app.register(import("./openid-connect.js"));
};

export default applicationRoutes;
