import { describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { DEFAULT_AGGREGATOR_TYPES } from "../src/config.js";
import { createContext } from "../src/context.js";
import type { Database } from "../src/db/database.js";

/** The document is built from route schemas alone; no route runs, so no database is needed. */
const noDatabase = {} as Database;

describe("GET /api/completion/v1/openapi.json", () => {
  it("documents every route, with course keys as a path parameter and shared schemas as components", async () => {
    const ctx = createContext({ aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false }, noDatabase, { resolveCaller: async () => null });
    const app = await buildApp(ctx);
    const response = await app.inject({ method: "GET", url: "/api/completion/v1/openapi.json" });
    await app.close();
    expect(response.statusCode).toBe(200);
    const document = response.json() as {
      openapi: string;
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.fromEntries(Object.entries(document.paths).map(([path, methods]) => [path, Object.keys(methods).sort()]))).toEqual({
      "/api/completion/v1/course/": ["get"],
      "/api/completion/v1/course/{course_key}/": ["get", "post"],
      "/api/completion/v1/stats/{course_key}/": ["get"],
      "/api/completion/v1/completion-batch": ["post"],
      "/api/completion/v1/admin/import": ["put"],
    });
    const detail = document.paths["/api/completion/v1/course/{course_key}/"]!["get"]!;
    expect(detail.parameters!.filter((parameter) => parameter.in === "path").map((parameter) => parameter.name)).toEqual(["course_key"]);
    expect(Object.keys(detail.responses).sort()).toEqual(["200", "400", "401", "403", "404", "503"]);
    expect(Object.keys(document.components.schemas).sort()).toEqual(["BlockEntry", "BulkBlock", "BulkData", "Completion", "CourseCompletionItem", "Error"]);
    // Every $ref names a component that exists.
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!);
    expect(refs.filter((name) => !(name in document.components.schemas))).toEqual([]);
  });
});

describe("GET /api/completion/v1/", () => {
  it("answers with the API's routes and where its OpenAPI document is", async () => {
    const ctx = createContext({ aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false }, noDatabase, { resolveCaller: async () => null });
    const app = await buildApp(ctx);
    const response = await app.inject({ method: "GET", url: "/api/completion/v1/" });
    await app.close();

    expect(response.statusCode).toBe(200);
    const index = response.json() as { openapi: string; routes: { method: string; path: string }[] };
    expect(index.openapi).toBe("/api/completion/v1/openapi.json");
    expect(index.routes.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
      "GET /api/completion/v1/course/",
      "GET /api/completion/v1/course/{course_key}/",
      "GET /api/completion/v1/stats/{course_key}/",
      "POST /api/completion/v1/completion-batch",
      "POST /api/completion/v1/course/{course_key}/",
      "PUT /api/completion/v1/admin/import",
    ]);
  });
});
