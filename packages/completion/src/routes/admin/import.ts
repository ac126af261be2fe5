import { Type } from "@sinclair/typebox";
import { withStatementTimeout } from "@tessera/db";
import { holds, PERMISSIONS } from "../../auth/caller.js";
import type { CompletionContext } from "../../context.js";
import { authenticate } from "../../http/authenticate.js";
import { badRequest, forbidden } from "../../http/errors.js";
import type { FastifyTypeBox } from "../../http/fastify-typebox.js";
import { errorResponses } from "../../http/schemas.js";
import { BulkDataSchema, type BulkData } from "../../ingest/bulk-format.js";
import { BulkLoadError, loadBulkData } from "../../ingest/bulk-load.js";

const Summary = Type.Object({
  courses: Type.Integer(),
  structuresChanged: Type.Integer(),
  users: Type.Integer(),
  enrollments: Type.Integer(),
  roles: Type.Integer(),
  cohorts: Type.Integer(),
  completions: Type.Integer(),
  learnersMarkedStale: Type.Integer(),
});

/**
 * What one statement of an import may take: a bulk load writes thousands of
 * rows per statement and marks whole courses stale, well past the service's
 * bound on ordinary statements, but still fails rather than hangs on a
 * stalled connection.
 */
export const IMPORT_STATEMENT_TIMEOUT_MS = 10 * 60 * 1000;

/** `PUT /api/completion/v1/admin/import`: loads bulk data (the README's format); permission `admin`. */
export function registerAdminImport(app: FastifyTypeBox, ctx: CompletionContext, bodyLimit: number): void {
  app.put(
    "/api/completion/v1/admin/import",
    {
      bodyLimit,
      schema: {
        summary: "Load courses, users, enrollments, roles, cohorts and completions",
        tags: ["admin"],
        security: [{ bearer: [] }],
        body: Type.Ref("BulkData"),
        response: { 200: Summary, ...errorResponses },
      },
      // The permission check runs before the (possibly large) body is validated.
      preValidation: async (request) => {
        const caller = await authenticate(request, ctx.callers);
        if (!holds(caller, PERMISSIONS.admin)) throw forbidden("The admin permission is needed to import data.");
      },
    },
    async (request) => {
      try {
        return await withStatementTimeout(IMPORT_STATEMENT_TIMEOUT_MS, () =>
          loadBulkData(ctx.db, ctx.structures, ctx.settings.aggregatorTypes, request.body as BulkData, ctx.now()),
        );
      } catch (error) {
        if (error instanceof BulkLoadError) throw badRequest(`Import refused: ${error.problems.join("; ")}`);
        throw error;
      }
    },
  );
}

export { BulkDataSchema };
