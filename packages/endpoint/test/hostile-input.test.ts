import { describe, expect, it } from "vitest";
import { endpoint } from "../src/index.js";

const HUNDRED_KB = 100_000;
/** The test's time limit: far above the few milliseconds linear work takes, while quadratic work on 100 KB takes minutes. */
const LINEAR_WORK_LIMIT_MS = 10_000;

/** About 100 KB of runs of `{`, `}`, `:`, `/`, `?` and `,` of varying lengths. */
function hostileText(): string {
  const characters = ["{", "}", ":", "/", "?", ","];
  let text = "";
  for (let run = 0; text.length < HUNDRED_KB; run++) {
    text += (characters[run % characters.length] as string).repeat(1 + ((run * 7) % 13));
  }
  return text;
}

describe("hostile input", () => {
  it.each([
    ["punctuation runs in the URL", () => endpoint("GET /a" + hostileText())],
    ["punctuation runs in a parameter", () => endpoint("GET /a/{p}{?q}", { p: hostileText(), q: hostileText() })],
    ["punctuation runs in a query parameter", () => endpoint("GET /a", { p: hostileText(), q: hostileText() })],
    ["punctuation runs in a JSON body parameter", () => endpoint("POST /a/{p}", { p: hostileText(), title: hostileText() })],
    ["unclosed braces", () => endpoint("GET /" + "{".repeat(HUNDRED_KB))],
    ["stray closing braces", () => endpoint("GET /" + "}".repeat(HUNDRED_KB))],
    ["one expression with very many variables", () => endpoint("GET /{" + "a,".repeat(HUNDRED_KB / 2) + "}", { a: "x" })],
    ["very many :name placeholders", () => endpoint("GET /" + ":ab".repeat(HUNDRED_KB / 3), { ab: "x" })],
    ["a long run of colons and slashes", () => endpoint("GET /" + ":/".repeat(HUNDRED_KB / 2))],
    ["a long accept header with a format", () => endpoint("GET /a", { headers: { accept: "application/vnd." + "a.".repeat(HUNDRED_KB / 2) }, mediaType: { format: "raw" } })],
    [
      "a long accept header with GraphQL previews",
      () => endpoint("POST /graphql", { headers: { accept: "a-".repeat(HUNDRED_KB / 2) }, mediaType: { previews: ["p"] } }),
    ],
  ])("handles %s of 100 KB in linear time", { timeout: LINEAR_WORK_LIMIT_MS }, (_name, call) => {
    const options = call();
    expect(options.url).toMatch(/^http:\/\/localhost:3000\//);
  });

  it("expands expressions that name no variable to nothing and keeps stray braces", () => {
    expect(endpoint("GET /a/{:}?,/{{:,}}").url).toBe("http://localhost:3000/a/?,/{}");
  });
});
