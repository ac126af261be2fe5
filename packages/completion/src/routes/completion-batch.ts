import { Type } from "@sinclair/typebox";
import { holds, PERMISSIONS } from "../auth/caller.js";
import type { CompletionContext } from "../context.js";
import { callerLearner, isOwnUsername } from "../http/access.js";
import { authenticate } from "../http/authenticate.js";
import { badRequest, forbidden, notFound } from "../http/errors.js";
import type { FastifyTypeBox } from "../http/fastify-typebox.js";
import { errorResponses } from "../http/schemas.js";
import { submitCompletionBatch } from "../ingest/completion-batch.js";

const Body = Type.Object(
  {
    username: Type.String({ minLength: 1 }),
    course_key: Type.String({ minLength: 1 }),
    blocks: Type.Record(Type.String(), Type.Unknown(), { description: "block key → completion value from 0 to 1", maxProperties: 5000 }),
  },
  { additionalProperties: false },
);

/** `POST /api/completion/v1/completion-batch` (C15): a learner's completions, all or nothing. */
export function registerCompletionBatch(app: FastifyTypeBox, ctx: CompletionContext): void {
  app.post(
    "/api/completion/v1/completion-batch",
    {
      schema: {
        summary: "Submit block completions of one learner in one course",
        tags: ["ingestion"],
        security: [{ bearer: [] }],
        body: Body,
        response: { 200: Type.Object({ detail: Type.String() }), ...errorResponses },
      },
    },
    async (request) => {
      const caller = await authenticate(request, ctx.callers);
      let batch = request.body;
      if (!holds(caller, PERMISSIONS.staff)) {
        const own = await callerLearner(ctx, caller);
        if (!isOwnUsername(own, batch.username)) throw forbidden("Only the learner or a staff user may submit completions.");
        // The learner's own name in another case: the batch is theirs, under the name as stored.
        batch = { ...batch, username: own.username };
      }
      const refusal = await submitCompletionBatch(ctx.db, ctx.structures, ctx.settings.aggregatorTypes, batch, ctx.now());
      if (refusal?.refused === "unknown_user") throw notFound(refusal.detail);
      if (refusal) throw badRequest(refusal.detail);
      return { detail: "ok" };
    },
  );
}
