import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { listDevMails } from "../../repositories/dev-mails.js";

/**
 * `GET /dev/mail`: the development mailbox, newest first. Served only in
 * development mode without an SMTP server; elsewhere the route does not exist.
 */
const devMailRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app.signon;
  if (config.mode !== "development" || config.mail.smtpUrl !== null) return;
  app.get("/dev/mail", { config: { errorFormat: "html" } }, async (_request, reply) => {
    const mails = await listDevMails(app.signon.db, 50);
    return reply.header("cache-control", "no-store").view("dev/mail.eta", { title: "Development mailbox", mails });
  });
};

export default devMailRoutes;
