import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { describeEvent } from "../../accounts/event-wording.js";
import { eventsOfUser, eventsPerPage } from "../../accounts/user-events.js";
import { renderPage } from "../../web/page.js";
import { formatTime } from "./format.js";
import { managedUser, UidParams, usersPageGuards } from "./managed-user.js";

const EventsQuery = Type.Object({ page: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,5}$" })) }, { additionalProperties: false });

/** `GET /users/:uid/events`: the user's audit events, as subject or actor, newest first, paged. */
const userEventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    "/users/:uid/events",
    { config: { errorFormat: "html" }, schema: { params: UidParams, querystring: EventsQuery }, preHandler: usersPageGuards },
    async (request, reply) => {
      const details = await managedUser(request, reply, request.params.uid);
      if (!details) return reply;
      const page = Number(request.query.page ?? "1");
      const { events, hasNextPage } = await eventsOfUser(app.signon, details.user.uid, page);
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
        })),
        firstNumber: (page - 1) * eventsPerPage + 1,
        previousHref: page > 1 ? (page === 2 ? base : `${base}?page=${page - 1}`) : null,
        nextHref: hasNextPage ? `${base}?page=${page + 1}` : null,
      });
    },
  );
};

export default userEventRoutes;
