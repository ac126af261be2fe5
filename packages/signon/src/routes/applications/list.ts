import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { listApplicationSummaries } from "../../repositories/application-admin.js";
import { renderPage } from "../../web/page.js";
import { readingContext } from "../../context.js";
import { ownRecentChange } from "../../http/recent-write-cookie.js";

/** `GET /applications`: every application with its pushes pending and failed. */
const applicationListRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications", { config: { errorFormat: "html", listRead: true } }, async (request, reply) => {
    const applications = await listApplicationSummaries(readingContext(app.signon, ownRecentChange(request, app.signon.config)).db);
    return renderPage(request, reply, "applications/list.eta", { title: "Applications", applications });
  });
};

export default applicationListRoutes;
