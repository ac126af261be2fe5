import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { describeEvent } from "../../accounts/event-wording.js";
import { eventCursorPattern, eventsOfUser } from "../../accounts/user-events.js";
import { renderPage } from "../../web/page.js";
import { formatTime } from "./format.js";
import { managedUser, UidParams, usersPageGuards } from "./managed-user.js";

/** `before`: the id of the last event of the page before (an "Older events" link); without it, the newest events. */
const EventsQuery = Type.Object({ before: Type.Optional(Type.String({ pattern: eventCursorPattern })) }, { additionalProperties: false });

/** `GET /users/:uid/events`: the user's audit events, as subject or actor, newest first, a page at a time (keyset: "Older events" names the last event shown). */
const userEventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    "/users/:uid/events",
    { config: { errorFormat: "html" }, schema: { params: UidParams, querystring: EventsQuery }, preHandler: usersPageGuards },
    async (request, reply) => {
      const details = await managedUser(request, reply, request.params.uid);
      if (!details) return reply;
      const before = request.query.before === undefined ? null : Number(request.query.before);
      const { events, olderThan } = await eventsOfUser(app.signon, details.user.uid, before);
      const base = `/users/${details.user.uid}/events`;
      return renderPage(request, reply, "users/events.eta", {
        title: `Event log of ${details.user.name}`,
        person: { uid: details.user.uid, name: details.user.name },
        events: events.map((event) => ({
          time: formatTime(event.occurredAt),
          iso: event.occurredAt.toISOString(),
          text: describeEvent(event, details.user.uid),
          by: event.actorUid === null ? "Sign-on" : (event.actorName ?? "A deleted user"),
          application: event.applicationName,
          ip: event.ip,
          browser: event.userAgent,
        })),
        olderPage: before !== null,
        newestHref: before !== null ? base : null,
        olderHref: olderThan !== null ? `${base}?before=${olderThan}` : null,
      });
    },
  );
};

export default userEventRoutes;
