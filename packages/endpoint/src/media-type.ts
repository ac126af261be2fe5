import type { MediaType } from "./types.js";

const VENDOR_MEDIA_TYPE = "application/vnd";
const DEFAULT_VENDOR = "tessera";

function isWordCharacter(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function isWordOrHyphen(code: number): boolean {
  return isWordCharacter(code) || code === 45;
}

/** End of the run of word characters in `text` starting at `start`. */
function wordEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && isWordCharacter(text.charCodeAt(end))) end++;
  return end;
}

/** Whether `rest` is empty, `+json`, `.word` or `.word+json`. */
function isOptionalSuffix(rest: string): boolean {
  if (rest === "" || rest === "+json") return true;
  if (rest.charAt(0) !== ".") return false;
  const end = wordEnd(rest, 1);
  if (end === 1) return false;
  const after = rest.slice(end);
  return after === "" || after === "+json";
}

/**
 * Sets the format parameter of one media type that ends in
 * `application/vnd.<vendor>[.v3][.<format>][+json]`, as `@octokit/endpoint`
 * does: `application/vnd.tessera.v3+json` with format `raw` becomes
 * `application/vnd.tessera.v3.raw`. Other media types stay as they are.
 */
function withFormat(mediaType: string, format: string): string {
  const start = mediaType.lastIndexOf(VENDOR_MEDIA_TYPE);
  if (start === -1) return mediaType;
  const tail = mediaType.slice(start + VENDOR_MEDIA_TYPE.length);
  if (tail.charAt(0) !== ".") return mediaType;
  const vendorEnd = wordEnd(tail, 1);
  if (vendorEnd === 1) return mediaType;
  const vendor = tail.slice(0, vendorEnd);
  const rest = tail.slice(vendorEnd);
  let version: string;
  if (rest.startsWith(".v3") && isOptionalSuffix(rest.slice(3))) version = ".v3";
  else if (isOptionalSuffix(rest)) version = "";
  else return mediaType;
  return mediaType.slice(0, start) + VENDOR_MEDIA_TYPE + vendor + version + "." + format;
}

/** Names written as `<name>-preview` in an accept header, one per run of word characters and hyphens. */
function previewsIn(accept: string): string[] {
  const previews: string[] = [];
  let at = 0;
  while (at < accept.length) {
    if (!isWordOrHyphen(accept.charCodeAt(at))) {
      at++;
      continue;
    }
    let end = at;
    while (end < accept.length && isWordOrHyphen(accept.charCodeAt(end))) end++;
    const run = accept.slice(at, end);
    const marker = run.lastIndexOf("-preview");
    if (marker > 0) previews.push(run.slice(0, marker));
    at = end;
  }
  return previews;
}

/** The vendor of the first `application/vnd.<vendor>` media type in `accept`. */
function vendorIn(accept: string): string {
  const start = accept.indexOf(VENDOR_MEDIA_TYPE + ".");
  if (start === -1) return DEFAULT_VENDOR;
  const vendorStart = start + VENDOR_MEDIA_TYPE.length + 1;
  const end = wordEnd(accept, vendorStart);
  return end === vendorStart ? DEFAULT_VENDOR : accept.slice(vendorStart, end);
}

/**
 * The `accept` header amended by `mediaType`, the way `@octokit/endpoint`
 * amends it: `format` replaces the format of each vendor media type, and for
 * GraphQL URLs `previews` (with any previews already in the header) become
 * `application/vnd.<vendor>.<name>-preview[.<format>|+json]` media types.
 * The vendor is the one the header names (`tessera` when it names none).
 * Binary requests (`application/octet-stream`) are left alone.
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
    const vendor = vendorIn(amended);
    const suffix = format ? `.${format}` : "+json";
    amended = [...previewsIn(amended), ...previews]
      .map((preview) => `application/vnd.${vendor}.${preview}-preview${suffix}`)
      .join(",");
  }
  return amended;
}
