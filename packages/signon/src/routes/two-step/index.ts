import type { FastifyPluginAsync } from "fastify";
import twoStepSetUpRoutes from "./set-up.js";
import twoStepSignInRoutes from "./sign-in-code.js";

/** 2-step verification with an authenticator app: setting it up, and the code asked for at sign-in. */
const twoStepRoutes: FastifyPluginAsync = async (app) => {
  await app.register(twoStepSetUpRoutes);
  await app.register(twoStepSignInRoutes);
};

export default twoStepRoutes;
