import type { RequestedFields } from "../read/course-items.js";
import { badRequest } from "./errors.js";

const DIGITS = /^[0-9]+$/;
const INTEGER = /^[+-]?[0-9]+$/;
const MAX_ID = 2147483647;

/**
 * `requested_fields` (C8): comma-separated items (trimmed) or a JSON array.
 * Valid: `mean`, `username` and each configured aggregator type.
 */
export function parseRequestedFields(input: string | readonly string[] | undefined, aggregatorTypes: ReadonlySet<string>): RequestedFields {
  const items = input === undefined ? [] : typeof input === "string" ? input.split(",") : [...input];
  const trimmed = items.map((item) => item.trim()).filter((item) => item !== "");
  const invalid = trimmed.filter((item) => item !== "mean" && item !== "username" && !aggregatorTypes.has(item));
  if (invalid.length > 0) throw badRequest(`Invalid requested_fields value(s): ${invalid.join(", ")}`);
  return {
    types: [...new Set(trimmed.filter((item) => aggregatorTypes.has(item)))],
    mean: trimmed.includes("mean"),
    username: trimmed.includes("username"),
  };
}

/** `user_ids` (C9): integers separated by comma or period, or a JSON array. Null when absent. */
export function parseUserIds(input: string | readonly number[] | undefined): number[] | null {
  if (input === undefined) return null;
  if (typeof input !== "string") return [...new Set(input)];
  const items = input.split(/[,.]/).map((item) => item.trim());
  const ids: number[] = [];
  for (const item of items) {
    if (!DIGITS.test(item) || Number(item) > MAX_ID) throw badRequest(`Invalid user_ids value: ${input}`);
    ids.push(Number(item));
  }
  return [...new Set(ids)];
}

/** `cohorts` (C12): one integer cohort id. Null when absent. */
export function parseCohort(input: string | undefined): number | null {
  if (input === undefined) return null;
  const text = input.trim();
  if (!INTEGER.test(text) || Math.abs(Number(text)) > MAX_ID) throw badRequest(`Invalid cohorts value: ${input}`);
  return Number(text);
}

/** `exclude_roles` (C12): comma-separated role names. */
export function parseExcludeRoles(input: string | undefined): string[] {
  if (input === undefined) return [];
  return [...new Set(input.split(",").map((item) => item.trim()).filter((item) => item !== ""))];
}

/** `mobile_only`: `true` in any case restricts the list to mobile courses; anything else does not. */
export function parseMobileOnly(input: string | undefined): boolean {
  return input?.trim().toLowerCase() === "true";
}

/** The course key of a wildcard path (`course-v1:…` or `org/course/run`), without its trailing slash. */
export function courseKeyFromPath(rest: string): string {
  return rest.endsWith("/") ? rest.slice(0, -1) : rest;
}
