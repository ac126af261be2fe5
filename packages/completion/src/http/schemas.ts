import { Type, type TSchema } from "@sinclair/typebox";

/** `{"detail": …}`: the body of every error. */
export const ErrorBody = Type.Object({ detail: Type.String() }, { $id: "Error" });

/** A completion dictionary (C2): `ratio` and `percent` are the same number. */
export const Completion = Type.Object(
  {
    earned: Type.Number(),
    possible: Type.Union([Type.Number(), Type.Null()], { description: "null when the course structure is unknown" }),
    percent: Type.Number({ minimum: 0, maximum: 1 }),
    ratio: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { $id: "Completion" },
);

/** A block entry (C3): `usage_key` and `block_key` are the same identifier. */
export const BlockEntry = Type.Object(
  {
    course_key: Type.String(),
    block_key: Type.String(),
    usage_key: Type.String(),
    completion: Type.Ref("Completion"),
  },
  { $id: "BlockEntry" },
);

/** A course completion item; each requested aggregator type adds a list of block entries. */
export const CourseCompletionItem = Type.Object(
  {
    course_key: Type.String(),
    completion: Type.Ref("Completion"),
    username: Type.Optional(Type.String()),
    mean: Type.Optional(Type.Number({ description: "mean course percent of enrolled learners without course roles (C13)" })),
  },
  { $id: "CourseCompletionItem", additionalProperties: Type.Array(Type.Ref("BlockEntry")) },
);

/** The page envelope (C4) around items of one schema. */
export function Page(item: TSchema): TSchema {
  return Type.Object({
    count: Type.Integer(),
    num_pages: Type.Integer(),
    current_page: Type.Integer(),
    start: Type.Integer(),
    next: Type.Union([Type.String(), Type.Null()]),
    previous: Type.Union([Type.String(), Type.Null()]),
    results: Type.Array(item),
  });
}

/** Statistics: a completion dictionary whose numbers are null when no learner is selected (C12). */
export const StatsBody = Type.Object(
  {
    results: Type.Array(
      Type.Object({
        course_key: Type.String(),
        mean_completion: Type.Object({
          earned: Type.Union([Type.Number(), Type.Null()]),
          possible: Type.Union([Type.Number(), Type.Null()]),
          percent: Type.Union([Type.Number(), Type.Null()]),
          ratio: Type.Union([Type.Number(), Type.Null()]),
        }),
        filters: Type.Object({
          cohorts: Type.Union([Type.Integer(), Type.Null()]),
          exclude_roles: Type.Array(Type.String()),
        }),
      }),
    ),
  },
  { $id: "Stats" },
);

/** Shared schemas, added to the app once so routes can `$ref` them. */
export const SHARED_SCHEMAS: readonly TSchema[] = [ErrorBody, Completion, BlockEntry, CourseCompletionItem];

/** Error responses by status, for a route's `response` schema. */
export const errorResponses = {
  400: Type.Ref("Error"),
  401: Type.Ref("Error"),
  403: Type.Ref("Error"),
  404: Type.Ref("Error"),
  503: Type.Ref("Error"),
};
