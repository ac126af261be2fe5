/** A decoded form: a parameter sent more than once becomes an array, so validation can refuse it. */
export type FormFields = Record<string, string | string[]>;

/** The values of a form field sent once, several times (boxes ticked) or not at all, as a list. */
export function fieldValues(field: string | string[] | undefined): string[] {
  return field === undefined ? [] : typeof field === "string" ? [field] : field;
}

/** Raised for bytes or escapes that are not UTF-8, escapes that are not `%XX`, and NUL characters. */
export class MalformedFormError extends Error {
  /** What is wrong, said of any part of a request ("contains a NUL character (U+0000)"), where the message says it of the body. */
  readonly problem: string;

  constructor(message: string, problem = message) {
    super(message);
    this.problem = problem;
  }
}

/** A malformed form body: `problem` said of the body. */
function malformedBody(problem: string): MalformedFormError {
  return new MalformedFormError(`The body ${problem}`, problem);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes an `application/x-www-form-urlencoded` body strictly: invalid UTF-8
 * (raw or percent-encoded) and broken escapes throw instead of turning into
 * U+FFFD, NUL throws (no text column can hold it), and repeated names are
 * kept as arrays instead of silently losing one.
 *
 * @see https://url.spec.whatwg.org/#application/x-www-form-urlencoded
 */
export function parseFormBody(body: Buffer | string): FormFields {
  let text: string;
  try {
    text = typeof body === "string" ? body : strictUtf8.decode(body);
  } catch {
    throw malformedBody("is not valid UTF-8");
  }
  const fields: FormFields = Object.create(null) as FormFields;
  if (text === "") return fields;
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    const name = decodeComponent(equals < 0 ? pair : pair.slice(0, equals));
    const value = decodeComponent(equals < 0 ? "" : pair.slice(equals + 1));
    const existing = fields[name];
    if (existing === undefined) fields[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else fields[name] = [existing, value];
  }
  return fields;
}

function decodeComponent(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    throw malformedBody("has a malformed percent-escape or invalid UTF-8");
  }
  if (decoded.includes("\u0000")) throw malformedBody("contains a NUL character (U+0000)");
  return decoded;
}
