import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { applicationMonthlyUsers, applicationSignIns, applicationSignInsCsv } from "../../applications/usage.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { eventCursorPattern } from "../../accounts/user-events.js";
import { renderPage } from "../../web/page.js";
import { formatTime, isId, sendNotFound } from "../../web/admin-section.js";
import { readingContext } from "../../context.js";
import { ownRecentChange } from "../../http/recent-write-cookie.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
/** `before`: the audit event of the last sign-in of the page before ("Older sign-ins", keyset). */
const UsageQuery = Type.Object({ before: Type.Optional(Type.String({ pattern: eventCursorPattern })) }, { additionalProperties: false });

const signInsPerPage = 50;

/**
 * `GET /applications/:id/usage`: who signed in to an application and when
 * (50 a page, newest first; "Older sign-ins" carries the last one's event id, keyset) and its unique users per month over the last 12
 * months; `GET /applications/:id/usage.csv`: the whole access log as CSV.
 */
const applicationUsageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications/:id/usage", { config: { errorFormat: "html", listRead: true }, schema: { params: Params, querystring: UsageQuery } }, async (request, reply) => {
    const reading = readingContext(app.signon, ownRecentChange(request, app.signon.config));
    const application = isId(request.params.id) ? await findApplicationById(reading.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    const before = request.query.before === undefined ? null : Number(request.query.before);
    const [months, rows] = await Promise.all([
      // Figures of months that have ended are kept on the primary the first time they are counted.
      applicationMonthlyUsers(reading, application.id, app.signon.db),
      applicationSignIns(reading, application.id, { limit: signInsPerPage + 1, before }),
    ]);
    const base = `/applications/${application.id}/usage`;
    return renderPage(request, reply, "applications/usage.eta", {
      title: `Use of ${application.name}`,
      application,
      months,
      retentionDays: app.signon.config.eventRetentionDays,
      signIns: rows.slice(0, signInsPerPage).map((row) => ({ ...row, when: formatTime(row.at), iso: row.at.toISOString() })),
      previousHref: before !== null ? base : null,
      nextHref: rows.length > signInsPerPage ? `${base}?before=${rows[signInsPerPage - 1]?.id ?? ""}` : null,
      csvHref: `${base}.csv`,
    });
  });

  app.get("/applications/:id/usage.csv", { config: { errorFormat: "html", listRead: true }, schema: { params: Params } }, async (request, reply) => {
    const reading = readingContext(app.signon, ownRecentChange(request, app.signon.config));
    const application = isId(request.params.id) ? await findApplicationById(reading.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    return reply
      .header("content-type", "text/csv; charset=utf-8")
      .header("content-disposition", 'attachment; filename="sign-ins.csv"')
      .header("cache-control", "no-store")
      .send(await applicationSignInsCsv(reading, application.id));
  });
};

export default applicationUsageRoutes;
