import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { packageBin } from "./support/package-bin.js";

const run = promisify(execFile);
const packageDirectory = new URL("..", import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
  dependencies?: Record<string, string>;
};

/** Runs a command in the package directory and reports its exit code and output. */
async function exitOf(file: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: packageDirectory, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : 1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

/** The call each build makes, printed as JSON. */
const CALL = `endpoint("POST /users/{uid}/reauth", { uid: "u-1", reason: "suspended" })`;

const EXPECTED_RESULT = {
  method: "POST",
  url: "http://localhost:3000/users/u-1/reauth",
  headers: {
    accept: "application/vnd.tessera.v3+json",
    "user-agent": `tessera-endpoint.js/${manifest.version}`,
    "content-type": "application/json; charset=utf-8",
  },
  body: { reason: "suspended" },
};

describe("the published package", () => {
  it("passes publint", async () => {
    const result = await exitOf(process.execPath, [packageBin("publint", "publint"), "--strict"]);
    expect(result, result.output).toMatchObject({ code: 0 });
  }, 60_000);

  it("passes attw --pack (types resolve for node10, node16 CJS and ESM, and bundlers)", async () => {
    const result = await exitOf(process.execPath, [packageBin("@arethetypeswrong/cli", "attw"), "--pack", "."]);
    expect(result, result.output).toMatchObject({ code: 0 });
  }, 60_000);

  it("passes attw --pack for the browser module (ESM and bundlers; .attw.json leaves it out of the check above)", async () => {
    const result = await exitOf(process.execPath, [packageBin("@arethetypeswrong/cli", "attw"), "--pack", ".", "--entrypoints", "./browser", "--profile", "esm-only"]);
    expect(result, result.output).toMatchObject({ code: 0 });
  }, 60_000);

  it("has no runtime dependencies", () => {
    expect(manifest.dependencies).toBeUndefined();
    for (const file of ["dist/index.mjs", "dist/index.cjs", "dist/browser/endpoint.browser.min.js"]) {
      const code = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
      expect(code, file).not.toMatch(/\bimport\s*\(|\bfrom\s*["']|\brequire\s*\(/);
    }
  });

  it("works through import (ESM)", async () => {
    const script = `import { endpoint } from "@tessera/endpoint"; console.log(JSON.stringify(${CALL}));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: packageDirectory });
    expect(JSON.parse(stdout)).toEqual(EXPECTED_RESULT);
  });

  it("works through require (CommonJS)", async () => {
    const script = `const { endpoint } = require("@tessera/endpoint"); console.log(JSON.stringify(${CALL}));`;
    const { stdout } = await run(process.execPath, ["--input-type=commonjs", "-e", script], { cwd: packageDirectory });
    expect(JSON.parse(stdout)).toEqual(EXPECTED_RESULT);
  });

  it("exports the minified browser module as @tessera/endpoint/browser", async () => {
    const script = `import { endpoint } from "@tessera/endpoint/browser"; console.log(JSON.stringify(${CALL}));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: packageDirectory });
    expect(JSON.parse(stdout)).toEqual(EXPECTED_RESULT);
  });

  it("works as the minified browser module", async () => {
    const bundle = new URL("../dist/browser/endpoint.browser.min.js", import.meta.url).href;
    const script = `const { endpoint } = await import(${JSON.stringify(bundle)}); console.log(JSON.stringify(${CALL}));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: packageDirectory });
    expect(JSON.parse(stdout)).toEqual(EXPECTED_RESULT);
  });
});
