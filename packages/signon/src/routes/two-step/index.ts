import type { FastifyPluginAsync } from "fastify";
import twoStepSetUpRoutes from "./set-up.js";
import twoStepPasskeyRoutes from "./passkey.js";
import twoStepSignInRoutes from "./sign-in-code.js";

/** 2-step verification: setting up an authenticator app, and the code or passkey asked for at sign-in. */
const twoStepRoutes: FastifyPluginAsync = async (app) => {
  await app.register(twoStepSetUpRoutes);
  await app.register(twoStepSignInRoutes);
  await app.register(twoStepPasskeyRoutes);
};

export default twoStepRoutes;
