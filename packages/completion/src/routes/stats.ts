import { Type } from "@sinclair/typebox";
import type { CompletionContext } from "../context.js";
import { parseCourseKey } from "../domain/keys.js";
import { authenticate } from "../http/authenticate.js";
import { notFound } from "../http/errors.js";
import type { FastifyTypeBox } from "../http/fastify-typebox.js";
import { courseKeyFromPath, parseCohort, parseExcludeRoles } from "../http/read-params.js";
import { errorResponses, StatsBody } from "../http/schemas.js";
import { STALE_STRUCTURE } from "../read/course-reads.js";
import { readCourseStats } from "../read/course-stats.js";

const Query = Type.Object({
  cohorts: Type.Optional(Type.String({ description: "one integer cohort id" })),
  exclude_roles: Type.Optional(Type.String({ description: "comma-separated course role names" })),
});

/** `GET /api/completion/v1/stats/{course_key}/`: mean completion of selected learners (C12). */
export function registerStats(app: FastifyTypeBox, ctx: CompletionContext): void {
  app.get(
    "/api/completion/v1/stats/*",
    {
      schema: {
        summary: "Mean completion over the selected enrolled users of a course",
        tags: ["completion"],
        security: [{ bearer: [] }],
        params: Type.Object({ "*": Type.String({ description: "course key" }) }),
        querystring: Query,
        response: { 200: StatsBody, ...errorResponses },
      },
    },
    async (request) => {
      const reading = ctx.forRead();
      await authenticate(request, reading.callers);
      const text = courseKeyFromPath(request.params["*"]);
      if (!parseCourseKey(text)) throw notFound(`Invalid course key: ${text}`);
      const cohortId = parseCohort(request.query.cohorts);
      const excludeRoles = parseExcludeRoles(request.query.exclude_roles);
      const filters = { cohortId, excludeRoles };
      // The cached tree saves a round trip; the stats query tells whether it is still the stored one (see detail).
      const cached = reading.structures.peek(text);
      let meanCompletion = cached ? await readCourseStats(reading, cached, filters, false) : STALE_STRUCTURE;
      if (meanCompletion === STALE_STRUCTURE) {
        const structure = await reading.structures.get(reading.db, text);
        if (!structure) throw notFound(`Course not found: ${text}`);
        meanCompletion = await readCourseStats(reading, structure, filters, true);
        if (meanCompletion === STALE_STRUCTURE) throw new Error("stats on the current course tree asked to be run again");
      }
      return {
        results: [{ course_key: text, mean_completion: meanCompletion, filters: { cohorts: cohortId, exclude_roles: excludeRoles } }],
      };
    },
  );
}
