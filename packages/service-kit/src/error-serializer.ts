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
  const error = thrown as Error & Record<string, unknown>;
  const message = withoutParameters(error);
  const serialized: SerializedError = { type: error.constructor?.name ?? error.name, message, stack: (error.stack ?? "").replace(error.message, message) };
  for (const field of databaseErrorFields) {
    const fieldValue = error[field];
    if (typeof fieldValue === "string" || typeof fieldValue === "number") serialized[field] = fieldValue;
  }
  if (error.cause !== undefined) {
    if (!(error.cause instanceof Error)) serialized.cause = error.cause;
    else serialized.cause = depth < deepestCause ? serializeError(error.cause, depth + 1) : "[cause left out]";
  }
  return serialized;
}

/**
 * A log message without a failed statement's parameters: Fastify's own
 * error log writes the error's message as the line's `msg`.
 */
export function messageWithoutParameters(message: string): string {
  if (!message.startsWith("Failed query: ")) return message;
  const parameters = message.indexOf("\nparams: ");
  return parameters === -1 ? message : `${message.slice(0, parameters)}\nparams: ${PARAMETERS_LEFT_OUT}`;
}

function withoutParameters(error: Error & Record<string, unknown>): string {
  if (typeof error.query !== "string" || !("params" in error)) return error.message;
  return `Failed query: ${error.query}\nparams: ${PARAMETERS_LEFT_OUT}`;
}
