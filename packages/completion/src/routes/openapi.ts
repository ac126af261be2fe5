import type { FastifyTypeBox } from "../http/fastify-typebox.js";

/** `GET /api/completion/v1/openapi.json`: the OpenAPI document built from the route schemas. */
export function registerOpenApi(app: FastifyTypeBox): void {
  app.get("/api/completion/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
