import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { describeEvent } from "../../accounts/event-wording.js";
import { eventCursorPattern } from "../../accounts/user-events.js";
import { eventsOfApplication } from "../../applications/application-events.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { formatTime, isId, sendNotFound } from "../../web/admin-section.js";
import { renderPage } from "../../web/page.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
/** `before`: the id of the last event of the page before (an "Older events" link); without it, the newest events. */
const EventsQuery = Type.Object({ before: Type.Optional(Type.String({ pattern: eventCursorPattern })) }, { additionalProperties: false });

/**
 * `GET /applications/:id/events`: the changes recorded for an application
 * (created, settings, URIs rewritten, client secret replaced, credentials
 * exported, retired, floods of failed authentications), newest first, 50 a
 * page (keyset: "Older events" names the last event shown).
 */
const applicationEventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications/:id/events", { config: { errorFormat: "html" }, schema: { params: Params, querystring: EventsQuery } }, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    const before = request.query.before === undefined ? null : Number(request.query.before);
    const { events, olderThan } = await eventsOfApplication(app.signon, application.id, before);
    const base = `/applications/${application.id}/events`;
    return renderPage(request, reply, "applications/events.eta", {
      title: `Event log of ${application.name}`,
      application,
      events: events.map((event) => ({
        time: formatTime(event.occurredAt),
        iso: event.occurredAt.toISOString(),
        // No person's page: a person the event is about is named.
        text: describeEvent(event, ""),
        by: event.actorUid === null ? "Sign-on (a command or a job)" : (event.actorName ?? "A deleted user"),
        ip: event.ip,
      })),
      olderPage: before !== null,
      newestHref: before !== null ? base : null,
      olderHref: olderThan !== null ? `${base}?before=${olderThan}` : null,
    });
  });
};

export default applicationEventRoutes;
