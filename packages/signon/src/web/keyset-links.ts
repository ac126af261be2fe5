import { Type, type Static } from "@fastify/type-provider-typebox";
import { decodeRowKey, encodeRowKey, rowKeyPattern, type KeysetPage, type PagePosition } from "../repositories/keyset.js";

/** The query of a keyset-paged list: `after` or `before` a row's key, or `last=yes`. */
export const KeysetQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ pattern: rowKeyPattern })),
    before: Type.Optional(Type.String({ pattern: rowKeyPattern })),
    last: Type.Optional(Type.Literal("yes")),
  },
  { additionalProperties: false },
);
export type KeysetQuery = Static<typeof KeysetQuery>;

/** Which page the query asks for, or `null` when it names more than one, or a key that cannot be one. */
export function keysetPosition(query: KeysetQuery): PagePosition | null {
  const asked = [query.after, query.before, query.last].filter((value) => value !== undefined).length;
  if (asked > 1) return null;
  if (query.last !== undefined) return { kind: "last" };
  const encoded = query.after ?? query.before;
  if (encoded === undefined) return { kind: "first" };
  const key = decodeRowKey(encoded);
  return key === null ? null : { kind: query.after !== undefined ? "after" : "before", key };
}

/** The first, previous, next and last links of a page of the list at `path` (`null` where there is none); `params` are kept in each. */
export function keysetLinks(
  path: string,
  page: Pick<KeysetPage<unknown>, "previous" | "next">,
  params: URLSearchParams = new URLSearchParams(),
): { firstHref: string | null; previousHref: string | null; nextHref: string | null; lastHref: string | null } {
  const href = (name?: string, value?: string) => {
    const query = new URLSearchParams(params);
    if (name !== undefined && value !== undefined) query.set(name, value);
    const text = query.toString();
    return text === "" ? path : `${path}?${text}`;
  };
  return {
    firstHref: page.previous !== null ? href() : null,
    previousHref: page.previous !== null ? href("before", encodeRowKey(page.previous)) : null,
    nextHref: page.next !== null ? href("after", encodeRowKey(page.next)) : null,
    lastHref: page.next !== null ? href("last", "yes") : null,
  };
}
