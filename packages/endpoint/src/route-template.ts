import { boundedCache } from "./bounded-cache.js";
import { colonParametersToTemplate } from "./colon-parameters.js";
import { OPTION_NAMES } from "./option-names.js";
import { compileTemplate, type CompiledTemplate } from "./uri-template/compile-template.js";

/**
 * The compiled template of a route URL, `:name` placeholders included, from a
 * bounded cache so repeated calls do not compile again. Option names such as
 * `url` never fill a variable.
 */
export const routeTemplate: (url: string) => CompiledTemplate = boundedCache((url) =>
  compileTemplate(colonParametersToTemplate(url), OPTION_NAMES),
);
