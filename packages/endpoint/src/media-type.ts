import type { MediaType } from "./types.js";

const VENDOR_MEDIA_TYPE = "application/vnd";
/** What may follow `application/vnd`: `.<vendor>[.v3][.<format>][+json]`, and nothing else. */
const VENDOR_SUFFIX = /^(\.\w+)(\.v3)?(?:\.\w+)?(?:\+json)?$/;
const FIRST_VENDOR = /application\/vnd\.(\w+)/;
const WORDS_AND_HYPHENS = /[\w-]+/g;

/**
 * Sets the format of a media type that ends in
 * `application/vnd.<vendor>[.v3][.<format>][+json]`, as `@octokit/endpoint`
 * does: `application/vnd.tessera.v3+json` with format `raw` becomes
 * `application/vnd.tessera.v3.raw`. Other media types stay as they are.
 */
function withFormat(mediaType: string, format: string): string {
  const start = mediaType.lastIndexOf(VENDOR_MEDIA_TYPE);
  const suffix = start === -1 ? null : VENDOR_SUFFIX.exec(mediaType.slice(start + VENDOR_MEDIA_TYPE.length));
  if (suffix === null) return mediaType;
  return mediaType.slice(0, start) + VENDOR_MEDIA_TYPE + (suffix[1] as string) + (suffix[2] ?? "") + "." + format;
}

/** Names written as `<name>-preview` in an accept header, one per run of word characters and hyphens. */
function previewsIn(accept: string): string[] {
  const previews: string[] = [];
  for (const run of accept.match(WORDS_AND_HYPHENS) ?? []) {
    const marker = run.lastIndexOf("-preview");
    if (marker > 0) previews.push(run.slice(0, marker));
  }
  return previews;
}

/**
 * The `accept` header amended by `mediaType`, the way `@octokit/endpoint`
 * amends it: `format` replaces the format of each vendor media type, and for
 * GraphQL URLs `previews` (with any previews already in the header) become
 * `application/vnd.<vendor>.<name>-preview[.<format>|+json]` media types.
 * The vendor is the first one the header names (`tessera` when it names none).
 * Binary requests (`application/octet-stream`) are left alone. Every pattern
 * used here matches in linear time.
 */
export function amendAccept(accept: string, mediaType: MediaType, url: string): string {
  const format = mediaType.format;
  const previews = mediaType.previews;
  const amendsPreviews = previews !== undefined && previews.length > 0 && url.endsWith("/graphql");
  if ((!format && !amendsPreviews) || accept.toLowerCase().includes("application/octet-stream")) return accept;
  let amended = accept;
  if (format) {
    amended = amended
      .split(",")
      .map((part) => withFormat(part, format))
      .join(",");
  }
  if (amendsPreviews) {
    const vendor = FIRST_VENDOR.exec(amended)?.[1] ?? "tessera";
    const suffix = format ? `.${format}` : "+json";
    amended = [...previewsIn(amended), ...previews]
      .map((preview) => `application/vnd.${vendor}.${preview}-preview${suffix}`)
      .join(",");
  }
  return amended;
}
