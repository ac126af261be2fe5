import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { holds, PERMISSIONS, type SignonCaller } from "../../auth/caller.js";
import type { CompletionContext } from "../../context.js";
import type { CourseStructure } from "../../domain/course-structures.js";
import type { TreeNode } from "../../domain/course-tree.js";
import { parseCourseKey, resolveBlockKey } from "../../domain/keys.js";
import { effectiveUsername, usernameParam } from "../../http/access.js";
import { authenticate } from "../../http/authenticate.js";
import { badRequest, forbidden, notFound } from "../../http/errors.js";
import type { FastifyTypeBox } from "../../http/fastify-typebox.js";
import { JSON_CONTENT_TYPE, pageEnvelopeJson, pageWindow, parsePageRequest } from "../../http/paging.js";
import { courseKeyFromPath, parseRequestedFields, parseUserIds } from "../../http/read-params.js";
import { absoluteUrl } from "../../http/request-url.js";
import { errorResponses, Page } from "../../http/schemas.js";
import { itemShape } from "../../read/course-items.js";
import { findLearnerForShape, readAllLearners, readLearnerInCourse, STALE_STRUCTURE } from "../../read/course-reads.js";

const Params = Type.Object({ "*": Type.String({ description: "course key: course-v1:org+course+run or org/course/run" }) });

const Query = Type.Object({
  username: Type.Optional(Type.String()),
  user_ids: Type.Optional(Type.String({ description: "integer user ids separated by comma or period" })),
  root_block: Type.Optional(Type.String()),
  requested_fields: Type.Optional(Type.String()),
  page: Type.Optional(Type.String()),
  page_size: Type.Optional(Type.String()),
});

const Body = Type.Object(
  {
    username: Type.Optional(Type.String()),
    user_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 2147483647 }), { maxItems: 10000 })),
    root_block: Type.Optional(Type.String()),
    requested_fields: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
  },
  { additionalProperties: false },
);

/** The filters of a detail read, from the query (GET) or the body (POST). */
interface DetailInput {
  readonly username: string | undefined;
  readonly userIds: string | readonly number[] | undefined;
  readonly rootBlock: string | undefined;
  readonly requestedFields: string | readonly string[] | undefined;
  readonly page: string | undefined;
  readonly pageSize: string | undefined;
}

/** The course key of the path; 404 for one that does not parse (rule 1). */
function courseKeyOfPath(rest: string): string {
  const text = courseKeyFromPath(rest);
  if (!parseCourseKey(text)) throw notFound(`Invalid course key: ${text}`);
  return text;
}

/** The course and its current tree; 404 for a course that is not known. */
async function loadCourse(ctx: CompletionContext, courseKey: string): Promise<CourseStructure> {
  const structure = await ctx.structures.get(ctx.db, courseKey);
  if (!structure) throw notFound(`Course not found: ${courseKey}`);
  return structure;
}

/** `root_block` mapped into the course and found in its tree (rule 2, C10); 404 otherwise. */
function rootBlockOf(structure: CourseStructure, text: string | undefined): TreeNode | null {
  if (text === undefined || text === "") return null;
  const key = resolveBlockKey(text, structure.key);
  const node = key === null ? undefined : structure.tree?.byKey.get(key);
  if (!node) throw notFound(`Invalid block key: ${text}`);
  return node;
}

/**
 * A detail read, as the JSON bytes of the page. The course tree is taken from
 * the cache when it is there (saving a round trip); the read's own query
 * returns the stored digest, and when the cached tree turns out to be
 * outdated the read runs once more on the current one.
 */
async function readDetail(ctx: CompletionContext, request: FastifyRequest, rest: string, input: DetailInput): Promise<Buffer> {
  const caller = await authenticate(request, ctx.callers);
  const courseKey = courseKeyOfPath(rest);
  const cached = ctx.structures.peek(courseKey);
  if (cached) {
    const result = await readDetailOn(ctx, request, caller, cached, input, false);
    if (result !== STALE_STRUCTURE) return result;
  }
  const result = await readDetailOn(ctx, request, caller, await loadCourse(ctx, courseKey), input, true);
  // A read on the current tree never asks for another try.
  if (result === STALE_STRUCTURE) throw new Error("a read on the current course tree asked to be run again");
  return result;
}

async function readDetailOn(
  ctx: CompletionContext,
  request: FastifyRequest,
  caller: SignonCaller,
  structure: CourseStructure,
  input: DetailInput,
  current: boolean,
): Promise<Buffer | typeof STALE_STRUCTURE> {
  const fields = parseRequestedFields(input.requestedFields, ctx.settings.aggregatorTypes);
  const userIds = parseUserIds(input.userIds);
  let root: TreeNode | null;
  try {
    root = rootBlockOf(structure, input.rootBlock);
  } catch (error) {
    // A block missing from a cached tree may be in the stored one.
    if (!current) return STALE_STRUCTURE;
    throw error;
  }
  const page = parsePageRequest(input.page, input.pageSize);
  if (page === "page") throw notFound("Invalid page.");
  if (page === "page_size") throw badRequest("Invalid page_size.");
  const url = absoluteUrl(request);
  const username = usernameParam(input.username);

  if (username === null && holds(caller, PERMISSIONS.staff)) {
    const result = await readAllLearners(ctx, structure, userIds, fields, root, page);
    if (result === STALE_STRUCTURE && !current) return STALE_STRUCTURE;
    if (!result || result === STALE_STRUCTURE) throw notFound("Invalid page.");
    return pageEnvelopeJson(result.window, url, result.items);
  }
  if (username === null) throw forbidden("Only staff may read the completion of every user of a course; pass username.");

  const effective = await effectiveUsername(ctx, caller, username);
  const learner = effective === null ? null : await findLearnerForShape(ctx, structure, itemShape(structure, fields.types, root), effective);
  if (learner && !current && learner.courseHash !== structure.course.structureHash) return STALE_STRUCTURE;
  if (!learner) throw notFound(`User not found: ${username}`);
  if (!learner.activelyEnrolled || (userIds !== null && !userIds.includes(learner.id))) {
    throw notFound(`User ${username} is not actively enrolled in ${structure.course.key}.`);
  }
  const window = pageWindow(page, 1);
  if (!window) throw notFound("Invalid page.");
  const item = await readLearnerInCourse(ctx, structure, learner, fields, root);
  return pageEnvelopeJson(window, url, [item]);
}

/**
 * `GET` and `POST /api/completion/v1/course/{course_key}/`: aggregates of one
 * course. The page is written as JSON bytes by the read itself (a detail page
 * can hold hundreds of block entries); the response schema documents it.
 */
export function registerCourseDetail(app: FastifyTypeBox, ctx: CompletionContext): void {
  const response = { 200: Page(Type.Ref("CourseCompletionItem")), ...errorResponses };
  app.get(
    "/api/completion/v1/course/*",
    {
      schema: {
        summary: "Aggregates for one course: one user, or every enrolled user for staff",
        tags: ["completion"],
        security: [{ bearer: [] }],
        params: Params,
        querystring: Query,
        response,
      },
    },
    async (request, reply) => {
      const body = await readDetail(ctx.forRead(), request, request.params["*"], {
        username: request.query.username,
        userIds: request.query.user_ids,
        rootBlock: request.query.root_block,
        requestedFields: request.query.requested_fields,
        page: request.query.page,
        pageSize: request.query.page_size,
      });
      return reply.header("content-type", JSON_CONTENT_TYPE).send(body);
    },
  );
  app.post(
    "/api/completion/v1/course/*",
    {
      schema: {
        summary: "Aggregates for one course, with the filters in a JSON body",
        tags: ["completion"],
        security: [{ bearer: [] }],
        params: Params,
        querystring: Type.Pick(Query, ["page", "page_size"]),
        body: Body,
        response,
      },
    },
    async (request, reply) => {
      const body = await readDetail(ctx.forRead(), request, request.params["*"], {
        username: request.body.username,
        userIds: request.body.user_ids,
        rootBlock: request.body.root_block,
        requestedFields: request.body.requested_fields,
        page: request.query.page,
        pageSize: request.query.page_size,
      });
      return reply.header("content-type", JSON_CONTENT_TYPE).send(body);
    },
  );
}
