import type { MediaType } from "./types.js";

/** The vendor of preview media types when no accept header names one. */
export const DEFAULT_VENDOR = "tessera";

/**
 * A vendor media type at the end of an entry of an accept header:
 * `application/vnd.<vendor>[.v3][.<format>][+json]`. (An attempt starts only
 * at `application/vnd` and stops at the next character outside `\w.+`: linear time.)
 */
const VENDOR_MEDIA_TYPE = /application\/vnd(\.\w+)(\.v3)?(?:\.\w+)?(?:\+json)?(?=,|$)/g;
/**
 * The vendor of the first vendor media type in an accept header. A preview
 * named without a vendor (`application/vnd.foo-preview`) names none.
 */
const FIRST_VENDOR = /application\/vnd\.(\w+)(?![\w-])/;
/**
 * The name of a preview in an accept header: a run of word characters and
 * hyphens up to its last `-preview`. (An attempt starts only where a run
 * starts, and backs off within that run alone: linear time.)
 */
const PREVIEW_NAME = /(?<![\w-])[\w-]+(?=-preview)/g;

/**
 * The `accept` header amended by `mediaType`, the way `@octokit/endpoint`
 * amends it: `format` replaces the format of each vendor media type
 * (`application/vnd.tessera.v3+json` with `raw` becomes
 * `application/vnd.tessera.v3.raw`), and for GraphQL URLs `previews` (with
 * any previews already in the header) become
 * `application/vnd.<vendor>.<name>-preview[.<format>|+json]` media types.
 * The vendor is the first one the header names; when it names none (only
 * previews, such as `application/vnd.foo-preview`), `fallbackVendor`: the
 * vendor of the defaults' accept header, as given by `vendorOf`.
 * Binary requests (`application/octet-stream`) are left alone. Every pattern
 * used here matches in linear time.
 */
export function amendAccept(accept: string, mediaType: MediaType, url: string, fallbackVendor = DEFAULT_VENDOR): string {
  const { format, previews } = mediaType;
  const amendsPreviews = !!previews?.length && url.endsWith("/graphql");
  if ((!format && !amendsPreviews) || accept.toLowerCase().includes("application/octet-stream")) return accept;
  const amended = format
    ? accept.replace(VENDOR_MEDIA_TYPE, (_mediaType, vendor: string, version = "") => `application/vnd${vendor}${version}.${format}`)
    : accept;
  if (!amendsPreviews) return amended;
  const vendor = vendorOf(amended) ?? fallbackVendor;
  const suffix = format ? "." + format : "+json";
  return [...(amended.match(PREVIEW_NAME) ?? []), ...previews].map((preview) => `application/vnd.${vendor}.${preview}-preview${suffix}`).join(",");
}

/** The vendor an accept header names first (`github` in `application/vnd.github.v3+json`), or undefined. */
export function vendorOf(accept: unknown): string | undefined {
  return typeof accept === "string" ? FIRST_VENDOR.exec(accept)?.[1] : undefined;
}
