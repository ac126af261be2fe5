/** Characters `encodeURIComponent` leaves as they are although they are not unreserved. */
const SUB_DELIMS_KEPT_BY_ENCODE_URI_COMPONENT = /[!'()*]/g;

/**
 * What `encodeURI` encodes but reserved expansion keeps: an existing
 * percent-encoded triplet (encoded as `%25XX`) and the brackets `[` `]`.
 * Each match is a whole escape, so `decodeURI` restores it. (No backtracking: linear time.)
 */
const KEPT_IN_RESERVED = /%25(?=[\dA-F]{2})|%5[BD]/gi;

/**
 * Percent-encodes everything outside the unreserved set (`ALPHA DIGIT - . _ ~`).
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3.2.1 (allow U)
 */
export function encodeUnreserved(text: string): string {
  return encodeURIComponent(text).replace(SUB_DELIMS_KEPT_BY_ENCODE_URI_COMPONENT, (character) => "%" + character.charCodeAt(0).toString(16).toUpperCase());
}

/**
 * Percent-encodes everything outside the unreserved and reserved sets,
 * keeping existing percent-encoded triplets as they are.
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3.2.1 (allow U+R)
 */
export function encodeReserved(text: string): string {
  return encodeURI(text).replace(KEPT_IN_RESERVED, decodeURI);
}
