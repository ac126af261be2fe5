import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { applicationMonthlyUsers, applicationSignIns, applicationSignInsCsv } from "../../applications/usage.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { renderPage } from "../../web/page.js";
import { formatTime, isId, sendNotFound } from "../../web/admin-section.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const UsageQuery = Type.Object({ page: Type.Optional(Type.String({ maxLength: 12 })) }, { additionalProperties: false });

const signInsPerPage = 50;
/** Pages beyond this are not offered (the CSV holds the whole log). */
const maxPage = 2000;

/**
 * `GET /applications/:id/usage`: who signed in to an application and when
 * (50 a page, newest first) and its unique users per month over the last 12
 * months; `GET /applications/:id/usage.csv`: the whole access log as CSV.
 */
const applicationUsageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications/:id/usage", { config: { errorFormat: "html" }, schema: { params: Params, querystring: UsageQuery } }, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    const rawPage = request.query.page ?? "1";
    const page = /^[1-9]\d{0,3}$/.test(rawPage) ? Number(rawPage) : Number.NaN;
    if (!(page <= maxPage)) {
      return renderPage(request, reply, "error.eta", { title: "Bad request", message: `The page is a whole number from 1 to ${maxPage}.` }, 400);
    }
    const [months, rows] = await Promise.all([
      applicationMonthlyUsers(app.signon, application.id),
      applicationSignIns(app.signon, application.id, { limit: signInsPerPage + 1, offset: (page - 1) * signInsPerPage }),
    ]);
    const base = `/applications/${application.id}/usage`;
    return renderPage(request, reply, "applications/usage.eta", {
      title: `Use of ${application.name}`,
      application,
      months,
      signIns: rows.slice(0, signInsPerPage).map((row) => ({ ...row, when: formatTime(row.at), iso: row.at.toISOString() })),
      previousHref: page > 1 ? `${base}?page=${page - 1}` : null,
      nextHref: rows.length > signInsPerPage && page < maxPage ? `${base}?page=${page + 1}` : null,
      csvHref: `${base}.csv`,
    });
  });

  app.get("/applications/:id/usage.csv", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    return reply
      .header("content-type", "text/csv; charset=utf-8")
      .header("content-disposition", 'attachment; filename="sign-ins.csv"')
      .header("cache-control", "no-store")
      .send(await applicationSignInsCsv(app.signon, application.id));
  });
};

export default applicationUsageRoutes;
