import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";

/** Four tiles of a mosaic, in the site header's colours. */
const icon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="4" fill="#0b0c0c"/>' +
  '<rect x="5" y="5" width="10" height="10" fill="#ffffff"/>' +
  '<rect x="17" y="5" width="10" height="10" fill="#1d70b8"/>' +
  '<rect x="5" y="17" width="10" height="10" fill="#00703c"/>' +
  '<rect x="17" y="17" width="10" height="10" fill="#ffdd00"/>' +
  "</svg>";

/**
 * `GET /favicon.svg`, which every page links to, and `GET /favicon.ico`, which
 * browsers ask for on their own: the same small SVG, cached for a day.
 */
const faviconRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const path of ["/favicon.svg", "/favicon.ico"]) {
    app.get(path, { logLevel: "warn" }, async (_request, reply) =>
      reply.type("image/svg+xml").header("cache-control", "public, max-age=86400").send(icon),
    );
  }
};

export default faviconRoutes;
