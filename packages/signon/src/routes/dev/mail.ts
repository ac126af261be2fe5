import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { listDevMails } from "../../repositories/dev-mails.js";
import { linkWebAddresses } from "../../web/linked-text.js";
import { renderPage } from "../../web/page.js";
import { useSessionIfAny } from "../../web/signed-in.js";

/**
 * `GET /dev/mail`: the development mailbox, newest first, with the links in
 * each mail clickable and the site navigation for whoever is signed in.
 * Served only in development mode without an SMTP server; elsewhere the route
 * does not exist.
 */
const devMailRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app.signon;
  if (config.mode !== "development" || config.mail.smtpUrl !== null) return;
  app.get("/dev/mail", { config: { errorFormat: "html" }, preHandler: useSessionIfAny }, async (request, reply) => {
    const mails = (await listDevMails(app.signon.db, 50)).map((mail) => ({ ...mail, body: linkWebAddresses(mail.textBody) }));
    return renderPage(request, reply, "dev/mail.eta", { title: "Development mailbox", mails });
  });
};

export default devMailRoutes;
