/** A piece of plain text, or a web address in it to show as a link. */
export type TextPiece = { text: string } | { href: string };

const webAddress = /https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]]/g;

/**
 * Splits plain text (a mail's body) into text and the `http(s)` addresses in
 * it, so that a page can show the addresses as links and escape the rest.
 * A stop or bracket that ends a sentence after an address is not part of it.
 */
export function linkWebAddresses(text: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  let from = 0;
  for (const match of text.matchAll(webAddress)) {
    if (match.index > from) pieces.push({ text: text.slice(from, match.index) });
    pieces.push({ href: match[0] });
    from = match.index + match[0].length;
  }
  if (from < text.length) pieces.push({ text: text.slice(from) });
  return pieces;
}
