import { endpoint } from "@tessera/endpoint";
import { readRegisterPage, RegisterPageError, type RegisterEntry } from "./register-page.js";

/** The bounds of one fetch, and what sends the requests. */
export interface RegisterFetchBounds {
  fetch: typeof fetch;
  /** A page (its redirects and its whole body included) not read after this long fails the fetch. */
  pageTimeoutMs: number;
  /** A feed of more pages than this fails. */
  maxPages: number;
  /** A page of more bytes than this fails. */
  maxPageBytes: number;
  /** Aborts the fetch (Sign-on is stopping). */
  signal?: AbortSignal | undefined;
  /** Called before each page is asked for (to renew the fetch's lease); what it throws ends the fetch. */
  beforePage?: ((page: number) => Promise<void>) | undefined;
}

/** An organisation of the feed, with where it was. */
export interface PlacedEntry {
  entry: RegisterEntry;
  page: number;
  item: number;
}

/** A fetch that failed; the message says which page and why, and names no address beyond the register's host and path. */
export class RegisterFetchError extends Error {}

/** Redirects followed for one page, on the register's own origin only. */
const maxRedirects = 5;

/**
 * Fetches every page of the register's feed from `url` on, following each
 * page's link to the next, and reads them all ({@link readRegisterPage})
 * before anything is applied. Every page must come from `url`'s origin
 * (scheme, host and port): a link or a redirect elsewhere fails the fetch,
 * as do a page that repeats one already read, a page that does not answer
 * 200 with JSON within the timeout, one larger than the bound, and more
 * pages than the bound. Throws a {@link RegisterFetchError}.
 */
export async function fetchRegisterPages(url: string, bounds: RegisterFetchBounds): Promise<{ pages: number; entries: PlacedEntry[] }> {
  const origin = new URL(url).origin;
  const seen = new Map<string, number>();
  const entries: PlacedEntry[] = [];
  let next: string | null = url;
  let page = 0;
  while (next !== null) {
    if (bounds.signal?.aborted === true) throw new RegisterFetchError("Sign-on is stopping");
    page += 1;
    const address: string = next;
    if (page > bounds.maxPages) throw new RegisterFetchError(`the feed has more than ${bounds.maxPages} pages (SIGNON_ORGANISATION_REGISTER_MAX_PAGES)`);
    if (new URL(address).origin !== origin) throw new RegisterFetchError(`page ${page - 1} links to a page on another host (${new URL(address).host}); only ${origin} is fetched`);
    const earlier = seen.get(address);
    if (earlier !== undefined) throw new RegisterFetchError(`page ${page - 1} links back to page ${earlier}`);
    seen.set(address, page);
    await bounds.beforePage?.(page);
    const body = await fetchPage(address, origin, page, bounds);
    let read: ReturnType<typeof readRegisterPage>;
    try {
      read = readRegisterPage(body, address);
    } catch (error) {
      if (error instanceof RegisterPageError) throw new RegisterFetchError(`page ${page}: ${error.message}`);
      throw error;
    }
    read.entries.forEach((entry, index) => entries.push({ entry, page, item: index + 1 }));
    next = read.next;
  }
  return { pages: page, entries };
}

/** One page's JSON body, within the page's time and size bounds. */
async function fetchPage(url: string, origin: string, page: number, bounds: RegisterFetchBounds): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), bounds.pageTimeoutMs);
  const stop = () => controller.abort();
  bounds.signal?.addEventListener("abort", stop);
  const fail = (why: string) => new RegisterFetchError(`page ${page}: ${why}`);
  try {
    let address = url;
    for (let redirects = 0; ; redirects++) {
      const request = endpoint({ method: "GET", url: address, headers: { accept: "application/json" } });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = String(value);
      const response = await bounds.fetch(request.url, { method: request.method, headers, redirect: "manual", signal: controller.signal });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel();
        if (!URL.canParse(location, address)) throw fail(`answered ${response.status} with a Location that is not a URL`);
        const target = new URL(location, address);
        if (target.origin !== origin) throw fail(`redirected to another host (${target.host}); only ${origin} is fetched`);
        if (redirects >= maxRedirects) throw fail(`redirected more than ${maxRedirects} times`);
        address = target.href;
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        throw fail(`answered HTTP ${response.status}`);
      }
      const text = await readBounded(response, bounds.maxPageBytes, fail);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw fail("the answer is not JSON");
      }
    }
  } catch (error) {
    if (error instanceof RegisterFetchError) throw error;
    if (bounds.signal?.aborted === true) throw fail("Sign-on is stopping");
    if (controller.signal.aborted) throw fail(`no complete answer within ${bounds.pageTimeoutMs / 1000} s (SIGNON_ORGANISATION_REGISTER_TIMEOUT_SECONDS)`);
    throw fail(describe(error));
  } finally {
    clearTimeout(timer);
    bounds.signal?.removeEventListener("abort", stop);
  }
}

/** The body as UTF-8 text, refusing it as soon as it passes `maxBytes`. */
async function readBounded(response: Response, maxBytes: number, fail: (why: string) => RegisterFetchError): Promise<string> {
  const tooLarge = () => fail(`larger than ${Math.floor(maxBytes / 1024)} KiB (SIGNON_ORGANISATION_REGISTER_MAX_PAGE_KIB)`);
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw fail("the answer is not UTF-8 text");
  }
}

/** A network failure in a few words, with the system's code (ECONNREFUSED, ENOTFOUND…) when there is one. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error).slice(0, 200);
  const cause = (error as Error & { cause?: unknown }).cause;
  const detail = cause instanceof Error ? `: ${(cause as Error & { code?: string }).code ?? cause.message}` : "";
  return `${error.message}${detail}`.slice(0, 200);
}
