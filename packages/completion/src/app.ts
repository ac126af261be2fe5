import type { ReadRouter } from "@tessera/db";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { lazySchemaCompilers, requestIdServerOptions, serviceLoggerOptions, type ServiceLoggerOptions } from "@tessera/service-kit";
import type { BearerTokenVerifier } from "@tessera/signon-client";
import Fastify, { type FastifyReply, type FastifySchema, type RouteOptions } from "fastify";
import type { CompletionContext } from "./context.js";
import { isTimestamp } from "./domain/timestamps.js";
import { installErrorHandler } from "./http/errors.js";
import type { FastifyTypeBox } from "./http/fastify-typebox.js";
import { SHARED_SCHEMAS } from "./http/schemas.js";
import { refuseEncodedBodies, screenEveryRoute } from "./http/screen-input.js";
import { BulkDataSchema } from "./ingest/bulk-format.js";
import { registerOperations } from "./operations.js";
import { registerSignonPushes } from "./routes/auth/signon-pushes.js";
import { registerAdminImport } from "./routes/admin/import.js";
import { registerCompletionBatch } from "./routes/completion-batch.js";
import { registerCourseDetail } from "./routes/course/detail.js";
import { registerCourseList } from "./routes/course/list.js";
import { registerOpenApi } from "./routes/openapi.js";
import { registerStats } from "./routes/stats.js";

/**
 * Course keys may contain slashes (`org/course/run`), so those routes end in a
 * wildcard; the document names it as the `{course_key}` path parameter.
 */
function documentCourseKeyPaths({ schema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  if (!url.endsWith("/*")) return { schema, url };
  const params = schema.params as { properties?: Record<string, unknown> } | undefined;
  const courseKey = params?.properties?.["*"] ?? { type: "string" };
  return {
    url: `${url.slice(0, -1)}{course_key}/`,
    schema: { ...schema, params: { type: "object", required: ["course_key"], properties: { course_key: courseKey } } },
  };
}

/** Options of {@link buildApp} beyond the shared context. */
export interface AppOptions {
  /** JSON logs with request ids and credentials redacted: `true`, or where and at which level; off by default, as in tests. */
  readonly logger?: boolean | ServiceLoggerOptions;
  /** Bearer token that `GET /metrics` requires (`COMPLETION_METRICS_TOKEN`); `null` or absent: open. */
  readonly metricsToken?: string | null;
  /** Where reads that tolerate lag go (`DATABASE_READ_URL`): its routing and each replica's lag are in `/metrics`. */
  readonly readRouter?: ReadRouter;
  /** Largest accepted body of the admin import, in bytes (default 64 MiB). */
  readonly importBodyLimit?: number;
  /**
   * Take the scheme, host and client address from a reverse proxy's `X-Forwarded-Proto`, `X-Forwarded-Host` and
   * `X-Forwarded-For` (`COMPLETION_TRUST_PROXY`), so that `next` and `previous` links name the public origin. Off by
   * default: anyone who reaches the port could set those headers.
   */
  readonly trustProxy?: boolean;
  /**
   * The bearer-token verifier that resolves callers (`SignonCallerResolver.verifier`): with it, Sign-on's push
   * receivers are served under `/auth/gds/api` and each push drops the remembered answers about its user.
   * Absent: no receivers.
   */
  readonly signonPushes?: BearerTokenVerifier;
  /**
   * Called with the options of every route as it is registered, before any is: the fuzz test lists the routes
   * this way, so that none escapes it.
   */
  readonly onRoute?: (route: RouteOptions) => void;
}

/**
 * Builds the completion API as a Fastify application: every route of
 * `/api/completion/v1/`, with or without trailing slash (C1), and its OpenAPI
 * document; and, given `signonPushes`, Sign-on's push receivers. It does not
 * listen; `server.ts` does.
 */
export async function buildApp(ctx: CompletionContext, options: AppOptions = {}): Promise<FastifyTypeBox> {
  const app = Fastify({
    // Building the routes takes seconds on a loaded machine; Fastify's 10 s default would end a slow start.
    pluginTimeout: 120_000,
    ...requestIdServerOptions(),
    logger: options.logger === undefined || options.logger === false ? false : serviceLoggerOptions(options.logger === true ? {} : options.logger),
    trustProxy: options.trustProxy ?? false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // Validate as written: no coercion ("1" is not an integer) and no silent removal of unknown fields; `date-time`
    // is the service's own (RFC 3339 in the years 0001–9999 UTC), as for the bulk-load CLI.
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false },
      onCreate: (ajv) => void ajv.addFormat("date-time", { type: "string", validate: isTimestamp }),
    },
    // Each route's schemas are compiled at its first request, not all of them before the service is ready.
    schemaController: lazySchemaCompilers(),
    // A path that does not decode, or a path parameter past maxParamLength: the usual error body.
    frameworkErrors: (error, _request, reply) => {
      const detail = error.code === "FST_ERR_BAD_URL" ? "Invalid percent-encoding in the path." : "A path parameter is too long.";
      void (reply as FastifyReply).code(error.code === "FST_ERR_BAD_URL" ? 400 : 414).send({ detail });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandler(app);
  app.addHook("preParsing", refuseEncodedBodies);
  screenEveryRoute(app);
  const onRoute = options.onRoute;
  if (onRoute) app.addHook("onRoute", (route) => onRoute(route as RouteOptions));
  registerOperations(app, ctx, { metricsToken: options.metricsToken ?? null, ...(options.readRouter === undefined ? {} : { readRouter: options.readRouter }) });
  // Before the OpenAPI plugin, like the operations routes: they are Sign-on's interface, not this API's.
  if (options.signonPushes) await registerSignonPushes(app, options.signonPushes);
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  app.addSchema(BulkDataSchema);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Tessera Completion API",
        version: "1.0.0",
        description: "Course completion: per-learner lists, per-course aggregates and statistics.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A Sign-on access token" } } },
    },
    transform: documentCourseKeyPaths,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === "string" ? json.$id : `def-${index}`) },
  });
  registerCourseList(app, ctx);
  registerCourseDetail(app, ctx);
  registerStats(app, ctx);
  registerCompletionBatch(app, ctx);
  registerAdminImport(app, ctx, options.importBodyLimit ?? 64 * 1024 * 1024);
  registerOpenApi(app);
  return app;
}
