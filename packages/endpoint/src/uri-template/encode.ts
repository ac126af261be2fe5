const SUB_DELIMS_KEPT_BY_ENCODE_URI_COMPONENT = /[!'()*]/g;
const ENCODED_BRACKET = /%5[BD]/g;
const ONLY_UNRESERVED = /^[\w.~-]*$/;
/** Splits text around percent-encoded triplets, which land at odd indexes. */
const PERCENT_ENCODED_TRIPLET = /(%[\dA-Fa-f]{2})/;

function percentEncode(character: string): string {
  return "%" + character.charCodeAt(0).toString(16).toUpperCase();
}

/** `encodeURI`, except that `[` and `]` (reserved characters) stay as they are. */
function encodeKeepingReserved(text: string): string {
  const encoded = encodeURI(text);
  return encoded.includes("%5") ? encoded.replace(ENCODED_BRACKET, (bracket) => (bracket === "%5B" ? "[" : "]")) : encoded;
}

/**
 * Percent-encodes everything outside the unreserved set (`ALPHA DIGIT - . _ ~`).
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3.2.1 (allow U)
 */
export function encodeUnreserved(text: string): string {
  return ONLY_UNRESERVED.test(text) ? text : encodeURIComponent(text).replace(SUB_DELIMS_KEPT_BY_ENCODE_URI_COMPONENT, percentEncode);
}

/**
 * Percent-encodes everything outside the unreserved and reserved sets,
 * keeping existing percent-encoded triplets as they are.
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3.2.1 (allow U+R)
 */
export function encodeReserved(text: string): string {
  if (!text.includes("%")) return encodeKeepingReserved(text);
  return text
    .split(PERCENT_ENCODED_TRIPLET)
    .map((part, index) => (index % 2 === 1 ? part : encodeKeepingReserved(part)))
    .join("");
}
