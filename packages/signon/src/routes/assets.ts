import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";

const passkeysScript = readFileSync(fileURLToPath(new URL("../assets/passkeys.js", import.meta.url)), "utf8");

/**
 * `GET /assets/passkeys.js`: the pages' one script (the WebAuthn ceremonies
 * of adding a passkey and signing in with one), allowed by the CSP's
 * `script-src 'self'`. Cached for an hour.
 */
const assetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/assets/passkeys.js", { logLevel: "warn" }, async (_request, reply) =>
    reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=3600").send(passkeysScript),
  );
};

export default assetRoutes;
