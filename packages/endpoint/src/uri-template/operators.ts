import { encodeReserved, encodeUnreserved } from "./encode.js";

/** How one expression operator expands, as in the table of RFC 6570 Appendix A. */
export interface OperatorBehaviour {
  /** Written before the first defined value. */
  readonly first: string;
  /** Written between defined values. */
  readonly separator: string;
  /** Whether values are written as `name=value`. */
  readonly named: boolean;
  /** What follows the name of a named empty value. */
  readonly ifEmpty: string;
  /** Encoding of values (U or U+R). */
  readonly encode: (text: string) => string;
}

function behaviour(first: string, separator: string, named: boolean, ifEmpty: string, allowReserved: boolean): OperatorBehaviour {
  return { first, separator, named, ifEmpty, encode: allowReserved ? encodeReserved : encodeUnreserved };
}

/** @see https://www.rfc-editor.org/rfc/rfc6570#appendix-A */
export const OPERATORS: Readonly<Record<string, OperatorBehaviour>> = {
  "": behaviour("", ",", false, "", false),
  "+": behaviour("", ",", false, "", true),
  "#": behaviour("#", ",", false, "", true),
  ".": behaviour(".", ".", false, "", false),
  "/": behaviour("/", "/", false, "", false),
  ";": behaviour(";", ";", true, "", false),
  "?": behaviour("?", "&", true, "=", false),
  "&": behaviour("&", "&", true, "=", false),
};
