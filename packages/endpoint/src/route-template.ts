import { boundedCache } from "./bounded-cache.js";
import { colonParametersToTemplate } from "./colon-parameters.js";
import { isOptionName } from "./option-names.js";
import { expandTemplate, type TemplateContext } from "./uri-template/expand.js";
import { parseTemplate, type ParsedTemplate } from "./uri-template/parse-template.js";

/** A route URL compiled once: `:name` placeholders rewritten, template parsed. */
export interface RouteTemplate {
  /** Expands the template from the options of a call; option names such as `url` never fill a variable. */
  readonly expand: (options: TemplateContext) => string;
  /** The variable names the template uses; these options never go to the query or body. */
  readonly variableNames: readonly string[];
}

function withoutOptionNames(options: TemplateContext): TemplateContext {
  const parameters: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if (!isOptionName(key)) parameters[key] = options[key];
  }
  return parameters;
}

function compileRouteTemplate(url: string): RouteTemplate {
  const template: ParsedTemplate = parseTemplate(colonParametersToTemplate(url));
  const usesOptionName = template.variableNames.some((name) => isOptionName(name));
  return {
    expand: usesOptionName
      ? (options) => expandTemplate(template, withoutOptionNames(options))
      : (options) => expandTemplate(template, options),
    variableNames: template.variableNames,
  };
}

/** Most distinct route URLs kept compiled; an application uses far fewer. */
const CACHED_ROUTES = 500;
/** Longer URLs are compiled on every call instead of being kept. */
const LONGEST_CACHED_URL = 2048;

const cachedRouteTemplate = boundedCache<RouteTemplate>(CACHED_ROUTES, LONGEST_CACHED_URL);

/** The compiled form of a route URL, from a bounded cache so repeated calls do not parse again. */
export function routeTemplate(url: string): RouteTemplate {
  return cachedRouteTemplate(url, compileRouteTemplate);
}
