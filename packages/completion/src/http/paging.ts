/**
 * Paging (decision C4): `page` is 1-based, `page_size` defaults to 10 and is
 * clamped to 1000; a page beyond the last one is invalid, except page 1 of an
 * empty result.
 */

import type { JsonPiece } from "../read/item-json.js";

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 1000;

const POSITIVE_INTEGER = /^[0-9]+$/;

/** A requested page, validated. */
export interface PageRequest {
  readonly page: number;
  readonly pageSize: number;
}

/** The slice of results that a page covers, and its envelope numbers. */
export interface PageWindow {
  readonly count: number;
  readonly numPages: number;
  readonly currentPage: number;
  readonly start: number;
  readonly limit: number;
  readonly hasNext: boolean;
  readonly hasPrevious: boolean;
}

function parsePositive(text: string): number | null {
  if (!POSITIVE_INTEGER.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= 1 ? value : null;
}

/**
 * Reads `page` and `page_size` query values. Returns `"page"` or
 * `"page_size"` naming the value that is not a positive integer.
 */
export function parsePageRequest(page: string | undefined, pageSize: string | undefined): PageRequest | "page" | "page_size" {
  const pageNumber = page === undefined ? 1 : parsePositive(page.trim());
  if (pageNumber === null) return "page";
  const size = pageSize === undefined ? DEFAULT_PAGE_SIZE : parsePositive(pageSize.trim());
  if (size === null) return "page_size";
  return { page: pageNumber, pageSize: Math.min(size, MAX_PAGE_SIZE) };
}

/** The window of `count` results that a page request covers; null when the page lies beyond the last one. */
export function pageWindow(request: PageRequest, count: number): PageWindow | null {
  const numPages = Math.max(1, Math.ceil(count / request.pageSize));
  if (request.page > numPages) return null;
  const start = (request.page - 1) * request.pageSize;
  return {
    count,
    numPages,
    currentPage: request.page,
    start,
    limit: request.pageSize,
    hasNext: request.page < numPages,
    hasPrevious: request.page > 1,
  };
}

/** The same absolute URL with only its `page` query parameter changed. */
export function pageUrl(absoluteUrl: string, page: number): string {
  const hashAt = absoluteUrl.indexOf("#");
  const withoutHash = hashAt === -1 ? absoluteUrl : absoluteUrl.slice(0, hashAt);
  const queryAt = withoutHash.indexOf("?");
  const base = queryAt === -1 ? withoutHash : withoutHash.slice(0, queryAt);
  const pairs = queryAt === -1 ? [] : withoutHash.slice(queryAt + 1).split("&").filter((pair) => pair !== "");
  // Other parameters keep their exact spelling; only `page` is replaced.
  const kept = pairs.filter((pair) => pair.split("=", 1)[0] !== "page");
  const at = pairs.findIndex((pair) => pair.split("=", 1)[0] === "page");
  kept.splice(at === -1 ? kept.length : at, 0, `page=${page}`);
  return `${base}?${kept.join("&")}`;
}

/** The page envelope around a page's results. */
export interface PageEnvelope<T> {
  count: number;
  num_pages: number;
  current_page: number;
  start: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** Wraps results in the page envelope, with next and previous links built from the request URL. */
export function pageEnvelope<T>(window: PageWindow, absoluteUrl: string, results: T[]): PageEnvelope<T> {
  return {
    count: window.count,
    num_pages: window.numPages,
    current_page: window.currentPage,
    start: window.start,
    next: window.hasNext ? pageUrl(absoluteUrl, window.currentPage + 1) : null,
    previous: window.hasPrevious ? pageUrl(absoluteUrl, window.currentPage - 1) : null,
    results,
  };
}

/** The `Content-Type` of a body written by {@link pageEnvelopeJson}. */
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

const RESULTS_SEPARATOR = Buffer.from(",");
const ENVELOPE_CLOSE = Buffer.from("]}");

/**
 * The page envelope as JSON bytes around results that write their own JSON
 * bytes into it, so a large page is sent as written, not built as objects
 * and serialised, and copied once.
 */
export function pageEnvelopeJson(window: PageWindow, absoluteUrl: string, results: readonly JsonPiece[]): Buffer {
  const envelope = JSON.stringify({ ...pageEnvelope(window, absoluteUrl, []), results: undefined });
  const head = Buffer.from(`${envelope.slice(0, -1)},"results":[`);
  // Measured first, then copied once into a body of that size: no list of every piece, no second copy.
  let length = head.length + ENVELOPE_CLOSE.length + Math.max(0, results.length - 1) * RESULTS_SEPARATOR.length;
  for (const item of results) length += item.byteLength;
  const body = Buffer.allocUnsafe(length);
  let at = head.copy(body, 0);
  for (let index = 0; index < results.length; index += 1) {
    if (index > 0) at += RESULTS_SEPARATOR.copy(body, at);
    at = results[index]!.writeTo(body, at);
  }
  // A piece that wrote other than it measured would send uninitialised memory, or cut the JSON: never either.
  if (at + ENVELOPE_CLOSE.length !== length) throw new Error(`a page's pieces wrote ${at + ENVELOPE_CLOSE.length} bytes of the ${length} they measured`);
  ENVELOPE_CLOSE.copy(body, at);
  return body;
}
