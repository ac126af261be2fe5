import type { FastifyTypeBox } from "../http/fastify-typebox.js";

/** What `GET /api/completion/v1/` lists: each documented route with its summary. */
interface IndexRoute {
  method: string;
  path: string;
  summary: string | null;
}

/** The documented routes of an OpenAPI document, in its order. */
function routesOf(document: { paths?: Record<string, Record<string, { summary?: string }>> }): IndexRoute[] {
  const routes: IndexRoute[] = [];
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      routes.push({ method: method.toUpperCase(), path, summary: operation.summary ?? null });
    }
  }
  return routes;
}

/**
 * `GET /api/completion/v1/openapi.json`: the OpenAPI document built from the route schemas; and
 * `GET /api/completion/v1/`, the API's index: its routes and where that document is, so the base
 * address that `npm start` prints answers.
 */
export function registerOpenApi(app: FastifyTypeBox): void {
  app.get("/api/completion/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  app.get("/api/completion/v1/", { schema: { hide: true } }, async () => ({
    name: "Tessera Completion API",
    openapi: "/api/completion/v1/openapi.json",
    authentication: "Authorization: Bearer <a Sign-on access token issued to the completion application>",
    routes: routesOf(app.swagger() as Parameters<typeof routesOf>[0]),
  }));
}
