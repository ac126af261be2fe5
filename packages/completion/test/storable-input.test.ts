import { describe, expect, it } from "vitest";
import { findUnstorableInput, MAX_JSON_DEPTH } from "../src/domain/storable-input.js";

/** `[[…[value]…]]`, `levels` arrays deep, built without recursion. */
function nested(levels: number, value: unknown = 0): unknown {
  let result = value;
  for (let level = 0; level < levels; level += 1) result = [result];
  return result;
}

describe("findUnstorableInput", () => {
  it("accepts ordinary text, characters beyond the BMP and nesting up to the limit", () => {
    expect(findUnstorableInput({ name: "Grüße 😀", list: ["a", 1, null, true], deep: nested(MAX_JSON_DEPTH - 1) })).toBeNull();
  });

  it.each([
    ["a NUL character", { users: [{ username: "a\u0000b" }] }, { path: "/users/0/username", reason: "contains a NUL character (U+0000)" }],
    ["an unpaired high surrogate", { name: "a\uD800" }, { path: "/name", reason: "contains an unpaired UTF-16 surrogate" }],
    ["an unpaired low surrogate", ["ok", "\uDC00b"], { path: "/1", reason: "contains an unpaired UTF-16 surrogate" }],
    ["a property name with a NUL", { blocks: { "x\u0000": 1 } }, { path: "/blocks", reason: "has a property name that contains a NUL character (U+0000)" }],
    ["the value itself", "\u0000", { path: "/", reason: "contains a NUL character (U+0000)" }],
    [
      "nesting one level past the limit",
      nested(MAX_JSON_DEPTH + 1),
      { path: "/0/0/0/0/0/0/0/0/…", reason: `is nested more than ${MAX_JSON_DEPTH} levels deep` },
    ],
  ])("finds %s", (_what, value, problem) => {
    expect(findUnstorableInput(value)).toEqual(problem);
  });

  it("walks 100,000 levels without overflowing the stack", () => {
    expect(findUnstorableInput(nested(100_000))?.reason).toBe(`is nested more than ${MAX_JSON_DEPTH} levels deep`);
  });
});
