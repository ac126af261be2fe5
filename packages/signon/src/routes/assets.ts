import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";

const readAsset = (name: string) => readFileSync(fileURLToPath(new URL(`../assets/${name}`, import.meta.url)), "utf8");
const passkeysScript = readAsset("passkeys.js");
const stylesheet = readAsset("signon.css");

/**
 * `GET /assets/signon.css`: the pages' one stylesheet; `GET
 * /assets/passkeys.js`: the pages' one script (the WebAuthn ceremonies of
 * adding a passkey and signing in with one), allowed by the CSP's
 * `script-src 'self'`. Cached for an hour.
 */
const assetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/assets/passkeys.js", { logLevel: "warn" }, async (_request, reply) =>
    reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=3600").send(passkeysScript),
  );
  app.get("/assets/signon.css", { logLevel: "warn" }, async (_request, reply) =>
    reply.type("text/css; charset=utf-8").header("cache-control", "public, max-age=3600").send(stylesheet),
  );
};

export default assetRoutes;
