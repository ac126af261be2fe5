import { beforeEach, describe, expect, it, vi } from "vitest";
import { endpoint } from "../src/index.js";
import type * as compileTemplateModule from "../src/uri-template/compile-template.js";
import { compileTemplate } from "../src/uri-template/compile-template.js";

vi.mock("../src/uri-template/compile-template.js", async (importOriginal) => {
  const original = await importOriginal<typeof compileTemplateModule>();
  return { ...original, compileTemplate: vi.fn(original.compileTemplate) };
});

const parses = vi.mocked(compileTemplate);

describe("parsed route templates", () => {
  beforeEach(() => {
    parses.mockClear();
  });

  it("are parsed once and reused by later calls", () => {
    for (let call = 0; call < 5; call++) endpoint("GET /cache/{a}/:b", { a: call, b: call });
    expect(parses).toHaveBeenCalledTimes(1);
  });

  it("are shared by endpoints derived with .defaults()", () => {
    endpoint("GET /cache/shared/{a}", { a: 1 });
    endpoint.defaults({ baseUrl: "https://elsewhere.example.org" })("GET /cache/shared/{a}", { a: 2 });
    expect(parses).toHaveBeenCalledTimes(1);
  });

  it("are kept in a bounded cache that forgets the oldest", () => {
    endpoint("GET /cache/first");
    for (let route = 0; route < 1000; route++) endpoint(`GET /cache/other/${route}`);
    parses.mockClear();
    endpoint("GET /cache/first");
    expect(parses).toHaveBeenCalledTimes(1);
  });

  it("are not kept when the URL is very long", () => {
    const long = "/cache/" + "x".repeat(10_000);
    endpoint(long);
    endpoint(long);
    expect(parses).toHaveBeenCalledTimes(2);
  });
});
