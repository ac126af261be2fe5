/** Written in place of a failed statement's parameters. */
export const PARAMETERS_LEFT_OUT = "[parameters left out]";

/** Fields of a PostgreSQL error that say where and why, never which values. */
const databaseErrorFields = ["code", "severity", "constraint", "table", "column", "schema", "routine", "statusCode"] as const;

/** How deep a chain of causes is followed. */
const deepestCause = 5;

/** An error as a log line holds it. */
export interface SerializedError {
  type: string;
  message: string;
  stack: string;
  cause?: SerializedError | unknown;
  [field: string]: unknown;
}

/**
 * The `err` of a log line: type, message, stack, cause and PostgreSQL's
 * error code and names, without the values a statement carried. A failed
 * query's error (drizzle's `Failed query: … params: …`) names its
 * parameters in its message and stack: token hashes, addresses, password
 * hashes. They are cut from both, and PostgreSQL's `detail` (which quotes
 * the values of a violated key) is left out.
 */
export function serializeError(thrown: Error, depth = 0): SerializedError {
  if (!(thrown instanceof Error)) return notAnError(thrown);
  const error = thrown as Error & Record<string, unknown>;
  const message = withoutParameters(error);
  // The stack begins with the message: written again with the message cut, whatever characters the statement holds.
  const stack = (error.stack ?? "").replace(error.message, () => message);
  const serialized: SerializedError = { type: error.constructor?.name ?? error.name, message, stack: messageWithoutParameters(stack) };
  for (const field of databaseErrorFields) {
    const fieldValue = error[field];
    if (typeof fieldValue === "string" || typeof fieldValue === "number") serialized[field] = fieldValue;
  }
  if (error.cause !== undefined) {
    // A cause that is not an error may be anything a caller had at hand: only a text is kept, cut like a message.
    if (!(error.cause instanceof Error)) serialized.cause = typeof error.cause === "string" ? messageWithoutParameters(error.cause) : "[cause left out]";
    else serialized.cause = depth < deepestCause ? serializeError(error.cause, depth + 1) : "[cause left out]";
  }
  return serialized;
}

/** What is logged as `err` when it is not an error: a text, cut like a message; anything else, by its type only. */
function notAnError(value: unknown): SerializedError {
  const message = typeof value === "string" ? messageWithoutParameters(value) : `[${value === null ? "null" : typeof value} left out]`;
  return { type: "NotAnError", message, stack: "" };
}

const failedQuery = "Failed query: ";
const parametersLine = "\nparams: ";

/** Where a stack's frames begin. */
const stackFrame = "\n    at ";

/**
 * A text without a failed statement's parameters, wherever in it drizzle's
 * `Failed query: … params: …` sits (a message, a stack, a line that quotes
 * an error's message): what follows `params: ` is cut, up to a stack's
 * frames if any follow, else to the end (a parameter may hold a line break).
 */
export function messageWithoutParameters(text: string): string {
  const query = text.indexOf(failedQuery);
  if (query === -1) return text;
  const parameters = text.indexOf(parametersLine, query);
  if (parameters === -1) return text;
  const frames = text.indexOf(stackFrame, parameters);
  return `${text.slice(0, parameters)}${parametersLine}${PARAMETERS_LEFT_OUT}${frames === -1 ? "" : text.slice(frames)}`;
}

function withoutParameters(error: Error & Record<string, unknown>): string {
  if (typeof error.query !== "string" || !("params" in error)) return messageWithoutParameters(error.message);
  return `${failedQuery}${error.query}${parametersLine}${PARAMETERS_LEFT_OUT}`;
}
