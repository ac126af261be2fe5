/**
 * One organisation of a register page, converted to the shape of a row of a
 * JSON import file (`organisation-import-file.ts`), which checks its values.
 */
export interface RegisterEntry {
  slug: unknown;
  name: unknown;
  parent_slug: string | null;
  closed: boolean;
  content_id?: unknown;
}

/** A page that is not in the register's format; the message says where. */
export class RegisterPageError extends Error {}

/**
 * Reads one page of an organisation register, in the shape of GOV.UK's
 * organisations API (`https://www.gov.uk/api/organisations`):
 *
 * - `results`: the organisations, each with `title` (its name),
 *   `details.slug`, `details.govuk_status` (`closed` closes it, any other
 *   value opens it), optionally `details.content_id` (a UUID), and
 *   optionally `parent_organisations`, whose first item is the parent (named
 *   by its `details.slug`, or by the last segment of its `id` or `web_url`);
 *   none or an empty list: no parent.
 * - the next page: `next_page_url`, or failing that the `href` of the item
 *   with `rel` `next` in `_response_info.links`; absent or `null` on the last
 *   page. A relative address is taken from `pageUrl`.
 *
 * Everything else is left aside. A page of another shape throws a
 * {@link RegisterPageError}; the values themselves (slug, name, content id)
 * are checked where every import checks them.
 */
export function readRegisterPage(body: unknown, pageUrl: string): { entries: RegisterEntry[]; next: string | null } {
  if (!isObject(body) || !Array.isArray(body.results)) throw new RegisterPageError('a page is a JSON object with a list "results"');
  const entries = body.results.map((item: unknown, index: number) => readEntry(item, `item ${index + 1}`));
  return { entries, next: nextPage(body, pageUrl) };
}

function readEntry(item: unknown, where: string): RegisterEntry {
  if (!isObject(item)) throw new RegisterPageError(`${where} is not an object`);
  const details = item.details;
  if (typeof item.title !== "string") throw new RegisterPageError(`${where} has no "title" (its name)`);
  if (!isObject(details) || typeof details.slug !== "string") throw new RegisterPageError(`${where} has no "details.slug"`);
  if (typeof details.govuk_status !== "string") throw new RegisterPageError(`${where} (${details.slug.slice(0, 100)}) has no "details.govuk_status"`);
  const contentId = details.content_id;
  if (contentId !== undefined && contentId !== null && typeof contentId !== "string") {
    throw new RegisterPageError(`${where} (${details.slug.slice(0, 100)}) has a "details.content_id" that is not a string`);
  }
  const parents = item.parent_organisations;
  if (parents !== undefined && parents !== null && !Array.isArray(parents)) {
    throw new RegisterPageError(`${where} (${details.slug.slice(0, 100)}) has "parent_organisations" that is not a list`);
  }
  const first: unknown = Array.isArray(parents) ? parents[0] : undefined;
  const parentSlug = first === undefined ? null : parentSlugOf(first);
  if (parentSlug === undefined) {
    throw new RegisterPageError(`${where} (${details.slug.slice(0, 100)}) names its parent without "details.slug", "id" or "web_url"`);
  }
  return {
    slug: details.slug,
    name: item.title,
    parent_slug: parentSlug,
    closed: details.govuk_status === "closed",
    ...(typeof contentId === "string" ? { content_id: contentId } : {}),
  };
}

/** A parent's slug: its `details.slug`, or the last path segment of its `id` or `web_url` (the string itself when not a URL). */
function parentSlugOf(parent: unknown): string | undefined {
  if (!isObject(parent)) return undefined;
  if (isObject(parent.details) && typeof parent.details.slug === "string") return parent.details.slug;
  const reference = typeof parent.id === "string" ? parent.id : typeof parent.web_url === "string" ? parent.web_url : undefined;
  if (reference === undefined) return undefined;
  if (!URL.canParse(reference)) return reference;
  return new URL(reference).pathname.split("/").filter((segment) => segment !== "").pop() ?? "";
}

function nextPage(body: Record<string, unknown>, pageUrl: string): string | null {
  let next: unknown = body.next_page_url;
  if (next === undefined || next === null) {
    const links = isObject(body._response_info) ? body._response_info.links : undefined;
    const link: unknown = Array.isArray(links) ? links.find((candidate: unknown) => isObject(candidate) && candidate.rel === "next") : undefined;
    next = isObject(link) ? link.href : undefined;
  }
  if (next === undefined || next === null) return null;
  if (typeof next !== "string" || !URL.canParse(next, pageUrl)) throw new RegisterPageError("the address of the next page is not a URL");
  return new URL(next, pageUrl).href;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
