import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { listSignInApplications } from "../repositories/account-overview.js";
import { renderPage } from "../web/page.js";
import { requireSignedIn, signedInUser } from "../web/signed-in.js";

/** `GET /`: the dashboard, each application the signed-in user may use, linked to its home page. */
const homeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/", { config: { errorFormat: "html" }, preHandler: requireSignedIn }, async (request, reply) => {
    const user = signedInUser(request);
    const applications = (await listSignInApplications(app.signon.db, user.uid)).map((application) => ({
      name: application.name,
      // Only web addresses become links, whatever was stored.
      homeUri: application.homeUri !== null && /^https?:\/\//i.test(application.homeUri) ? application.homeUri : null,
    }));
    return renderPage(request, reply, "home.eta", { title: "Dashboard", name: user.name, applications });
  });
};

export default homeRoutes;
