import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const packageDirectory = new URL("..", import.meta.url).pathname;
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** Every fenced ```js block of the README, with the heading it appears under. */
function jsExamples(markdown: string): { title: string; code: string }[] {
  const examples: { title: string; code: string }[] = [];
  let heading = "README";
  let block: string[] | undefined;
  for (const line of markdown.split("\n")) {
    if (block !== undefined) {
      if (line.startsWith("```")) {
        examples.push({ title: `${heading} #${examples.length + 1}`, code: block.join("\n") });
        block = undefined;
      } else {
        block.push(line);
      }
    } else if (line.trim() === "```js") {
      block = [];
    } else if (line.startsWith("#")) {
      heading = line.replace(/^#+\s*/, "");
    }
  }
  return examples;
}

const examples = jsExamples(readme);

describe("README examples", () => {
  it("has examples, each with assertions", () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const example of examples) expect(example.code, example.title).toContain("assert.");
  });

  it.each(examples.map((example) => [example.title, example.code]))("%s runs against the built package", async (_title, code) => {
    await expect(run(process.execPath, ["--input-type=module", "-e", code], { cwd: packageDirectory })).resolves.toBeDefined();
  });
});
