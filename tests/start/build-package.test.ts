// What npm start builds again before it runs the services: a package whose sources changed, and a
// service whose bundle holds another package's sources that changed.
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// @ts-expect-error -- a script of plain JavaScript, without type declarations
import { needsBuild } from "../../scripts/build-package.mjs";

const isStale = needsBuild as (packageDir: string) => Promise<boolean>;

let checkout: string;
const service = () => join(checkout, "packages/service");

async function file(path: string, contents = "", secondsAgo = 0): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, contents);
  const when = new Date(Date.now() - secondsAgo * 1000);
  await utimes(path, when, when);
}

beforeEach(async () => {
  // A checkout of two packages, built a minute ago: a service bundled with a library.
  checkout = await mkdtemp(join(tmpdir(), "tessera-build-"));
  await file(join(service(), "package.json"), JSON.stringify({ tessera: { bundle: ["src/server.ts"] } }), 120);
  await file(join(service(), "src/server.ts"), "export {};", 120);
  await file(join(checkout, "packages/library/src/index.ts"), "export {};", 120);
  await file(join(service(), "dist/.built"), "", 60);
  await file(join(service(), "dist/bundled/inputs.json"), JSON.stringify(["packages/service/src/server.ts", "packages/library/src/index.ts"]), 60);
});

afterEach(async () => {
  await rm(checkout, { recursive: true, force: true });
});

describe("needsBuild", () => {
  it("builds nothing when no source changed since the last build", async () => {
    expect(await isStale(service())).toBe(false);
  });

  it("builds a service again when one of its own sources changed", async () => {
    await file(join(service(), "src/server.ts"), "export const changed = true;");
    expect(await isStale(service())).toBe(true);
  });

  it("builds a service again when a workspace package bundled with it changed", async () => {
    await file(join(checkout, "packages/library/src/index.ts"), "export const changed = true;");
    expect(await isStale(service())).toBe(true);
  });

  it("builds a service again when a file its bundle was made from is gone", async () => {
    await rm(join(checkout, "packages/library/src/index.ts"));
    expect(await isStale(service())).toBe(true);
  });

  it("builds a service again when its bundle was never made", async () => {
    await rm(join(service(), "dist/bundled"), { recursive: true });
    expect(await isStale(service())).toBe(true);
  });
});
