const SUB_DELIMS_KEPT_BY_ENCODE_URI_COMPONENT = /[!'()*]/g;
const ENCODED_BRACKET = /%5[BD]/g;

function percentEncode(character: string): string {
  return "%" + character.charCodeAt(0).toString(16).toUpperCase();
}

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/** Whether `code` is ALPHA, DIGIT, `-`, `.`, `_` or `~`. */
function isUnreserved(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45 || code === 46 || code === 95 || code === 126
  );
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
  for (let at = 0; at < text.length; at++) {
    if (!isUnreserved(text.charCodeAt(at))) {
      return encodeURIComponent(text).replace(SUB_DELIMS_KEPT_BY_ENCODE_URI_COMPONENT, percentEncode);
    }
  }
  return text;
}

/**
 * Percent-encodes everything outside the unreserved and reserved sets,
 * keeping existing percent-encoded triplets as they are.
 * @see https://www.rfc-editor.org/rfc/rfc6570#section-3.2.1 (allow U+R)
 */
export function encodeReserved(text: string): string {
  let encoded = "";
  let copiedUpTo = 0;
  for (let at = text.indexOf("%"); at !== -1; at = text.indexOf("%", at + 1)) {
    if (isHexDigit(text.charCodeAt(at + 1)) && isHexDigit(text.charCodeAt(at + 2))) {
      encoded += encodeKeepingReserved(text.slice(copiedUpTo, at)) + text.slice(at, at + 3);
      copiedUpTo = at + 3;
      at += 2;
    }
  }
  return copiedUpTo === 0 ? encodeKeepingReserved(text) : encoded + encodeKeepingReserved(text.slice(copiedUpTo));
}
