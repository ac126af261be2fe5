import { FormatRegistry, Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { findUnstorableInput } from "../domain/storable-input.js";
import { isTimestamp } from "../domain/timestamps.js";

/**
 * The bulk-load JSON format, documented in the package README. One schema
 * validates it for the CLI (`completion load FILE`) and the admin endpoint
 * (`PUT /api/completion/v1/admin/import`).
 */

const Text = Type.String({ minLength: 1, maxLength: 255 });

/** A block in a course tree: type and id make its key; children nest. */
export interface BulkBlock {
  type: string;
  id: string;
  display_name?: string;
  mode?: "aggregator" | "excluded" | "completable";
  start?: string | null;
  visible_to_staff_only?: boolean;
  children?: BulkBlock[];
}

export const BulkBlockSchema: TSchema = Type.Recursive(
  (This) =>
    Type.Object(
      {
        type: Type.String({ pattern: "^[\\w\\-]+$", maxLength: 255 }),
        id: Type.String({ pattern: "^[\\w\\-~.:]+$", maxLength: 255 }),
        display_name: Type.Optional(Type.String({ maxLength: 1000 })),
        mode: Type.Optional(Type.Union([Type.Literal("aggregator"), Type.Literal("excluded"), Type.Literal("completable")])),
        start: Type.Optional(Type.Union([Type.String({ format: "date-time" }), Type.Null()])),
        visible_to_staff_only: Type.Optional(Type.Boolean()),
        children: Type.Optional(Type.Array(This)),
      },
      { additionalProperties: false },
    ),
  { $id: "BulkBlock" },
);

export const BulkCourseSchema = Type.Object(
  {
    course_key: Text,
    mobile_available: Type.Optional(Type.Boolean()),
    structure: Type.Optional(Type.Union([BulkBlockSchema, Type.Null()])),
  },
  { additionalProperties: false },
);

export const BulkUserSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    username: Text,
    email: Type.String({ maxLength: 254 }),
    uid: Type.Optional(Type.Union([Text, Type.Null()])),
  },
  { additionalProperties: false },
);

export const BulkEnrollmentSchema = Type.Object(
  {
    username: Text,
    course_key: Text,
    is_active: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const BulkRoleSchema = Type.Object(
  { username: Text, course_key: Text, role: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const BulkCohortSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    course_key: Text,
    name: Type.String({ minLength: 1, maxLength: 255 }),
    members: Type.Array(Text),
  },
  { additionalProperties: false },
);

export const BulkCompletionSchema = Type.Object(
  {
    username: Text,
    course_key: Text,
    block_key: Type.String({ minLength: 1, maxLength: 1000 }),
    completion: Type.Number({ minimum: 0, maximum: 1 }),
    modified: Type.Optional(Type.String({ format: "date-time" })),
  },
  { additionalProperties: false },
);

export const BulkDataSchema = Type.Object(
  {
    courses: Type.Optional(Type.Array(BulkCourseSchema)),
    users: Type.Optional(Type.Array(BulkUserSchema)),
    enrollments: Type.Optional(Type.Array(BulkEnrollmentSchema)),
    roles: Type.Optional(Type.Array(BulkRoleSchema)),
    cohorts: Type.Optional(Type.Array(BulkCohortSchema)),
    completions: Type.Optional(Type.Array(BulkCompletionSchema)),
  },
  { additionalProperties: false, $id: "BulkData" },
);

export type BulkCourse = Omit<Static<typeof BulkCourseSchema>, "structure"> & { structure?: BulkBlock | null };
export type BulkData = Omit<Static<typeof BulkDataSchema>, "courses"> & { courses?: BulkCourse[] };

// The schemas' `date-time`: RFC 3339 within the years 0001–9999 (UTC); the HTTP validator is given the same check.
if (!FormatRegistry.Has("date-time")) FormatRegistry.Set("date-time", isTimestamp);

const bulkDataChecker = TypeCompiler.Compile(BulkDataSchema);

/**
 * Checks a parsed JSON value against the bulk-load format. Returns the data, or
 * the first few problems as `path: message` lines. Text that cannot be stored
 * and nesting past `MAX_JSON_DEPTH` are refused first, before the
 * (recursive) schema check.
 */
export function checkBulkData(value: unknown): { ok: true; data: BulkData } | { ok: false; errors: string[] } {
  const unstorable = findUnstorableInput(value);
  if (unstorable) return { ok: false, errors: [`${unstorable.path}: ${unstorable.reason}`] };
  if (bulkDataChecker.Check(value)) return { ok: true, data: value as BulkData };
  const errors: string[] = [];
  for (const error of bulkDataChecker.Errors(value)) {
    errors.push(`${error.path || "/"}: ${error.message}`);
    if (errors.length === 10) break;
  }
  return { ok: false, errors };
}
