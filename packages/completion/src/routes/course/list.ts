import { Type } from "@sinclair/typebox";
import type { FastifyTypeBox } from "../../http/fastify-typebox.js";
import type { CompletionContext } from "../../context.js";
import { effectiveUsername, usernameParam } from "../../http/access.js";
import { findLearnerByUsername } from "../../repositories/learners.js";
import { authenticate } from "../../http/authenticate.js";
import { notFound, badRequest } from "../../http/errors.js";
import { JSON_CONTENT_TYPE, pageEnvelopeJson, pageWindow, parsePageRequest } from "../../http/paging.js";
import { parseMobileOnly, parseRequestedFields } from "../../http/read-params.js";
import { absoluteUrl } from "../../http/request-url.js";
import { errorResponses, Page } from "../../http/schemas.js";
import { readLearnerCourses } from "../../read/course-reads.js";

const Query = Type.Object({
  username: Type.Optional(Type.String()),
  requested_fields: Type.Optional(Type.String()),
  mobile_only: Type.Optional(Type.String()),
  page: Type.Optional(Type.String()),
  page_size: Type.Optional(Type.String()),
});

/** `GET /api/completion/v1/course/`: one learner's completion in each of their active courses. */
export function registerCourseList(app: FastifyTypeBox, ctx: CompletionContext): void {
  app.get(
    "/api/completion/v1/course/",
    {
      schema: {
        summary: "Completion of one user across all active enrollments",
        tags: ["completion"],
        security: [{ bearer: [] }],
        querystring: Query,
        response: { 200: Page(Type.Ref("CourseCompletionItem")), ...errorResponses },
      },
    },
    async (request, reply) => {
      const reading = ctx.forRead();
      const caller = await authenticate(request, reading.callers);
      const fields = parseRequestedFields(request.query.requested_fields, ctx.settings.aggregatorTypes);
      const page = parsePageRequest(request.query.page, request.query.page_size);
      if (page === "page") throw notFound("Invalid page.");
      if (page === "page_size") throw badRequest("Invalid page_size.");
      const username = await effectiveUsername(reading, caller, usernameParam(request.query.username));
      const learner = username === null ? null : await findLearnerByUsername(reading.db, username);
      const url = absoluteUrl(request);
      if (username !== null && !learner) throw notFound(`User not found: ${username}`);
      // The items come as JSON bytes (see the detail route), and so does the page.
      void reply.header("content-type", JSON_CONTENT_TYPE);
      if (!learner) return reply.send(pageEnvelopeJson(pageWindow(page, 0) ?? notFoundPage(), url, []));
      const result = await readLearnerCourses(reading, learner.username, learner.id, parseMobileOnly(request.query.mobile_only), fields, page);
      if (!result) throw notFound("Invalid page.");
      return reply.send(pageEnvelopeJson(result.window, url, result.items));
    },
  );
}

function notFoundPage(): never {
  throw notFound("Invalid page.");
}
