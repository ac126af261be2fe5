import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

type SchemaController = NonNullable<FastifyServerOptions["schemaController"]>;
type CompiledFunction = ((data: unknown) => unknown) & { errors?: unknown };
/** What `@fastify/ajv-compiler` and `@fastify/fast-json-stringify-compiler` make: a compiler per set of shared schemas and options. */
type CompilerFactory = (externalSchemas: unknown, options: unknown) => (route: unknown) => CompiledFunction;

/** Fastify's own schema compilers (its dependencies, in the versions it was released with), loaded as Fastify loads them. */
const fromFastify = createRequire(createRequire(import.meta.url).resolve("fastify"));

/**
 * Fastify's `schemaController` option that compiles each route's schemas
 * (validation with Ajv, responses with fast-json-stringify) when a request
 * first needs them instead of when the route is added: the same compilers,
 * with the same options, give the same functions and the same errors, but a
 * service starts without compiling the schemas of every route first (a fifth
 * to a tenth of its start-up work), and without even loading the compilers
 * (Ajv alone is a few hundred milliseconds of module loading), which the
 * first request with a schema loads. Fastify compiles header schemas as a
 * custom compiler's (as written, not in lower case): the services have none.
 */
export function lazySchemaCompilers(): SchemaController {
  const lazily = (load: () => CompilerFactory): CompilerFactory => {
    let factory: CompilerFactory | undefined;
    return (externalSchemas, options) => {
      let compile: ReturnType<CompilerFactory> | undefined;
      return (route) =>
        onFirstCall(() => {
          factory ??= load();
          compile ??= factory(externalSchemas, options);
          return compile(route);
        });
    };
  };
  const compilersFactory = {
    buildValidator: lazily(() => (fromFastify("@fastify/ajv-compiler") as () => CompilerFactory)()),
    buildSerializer: lazily(() => (fromFastify("@fastify/fast-json-stringify-compiler") as () => CompilerFactory)()),
  };
  return { compilersFactory } as SchemaController;
}

/** A function that compiles the real one at its first call, then calls it; Ajv's `errors` of the last call are passed on. */
function onFirstCall(compile: () => CompiledFunction): CompiledFunction {
  let compiled: CompiledFunction | undefined;
  const call: CompiledFunction = (data) => {
    compiled ??= compile();
    const result = compiled(data);
    call.errors = compiled.errors;
    return result;
  };
  return call;
}
