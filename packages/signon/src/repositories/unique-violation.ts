/** The SQLSTATE of a database error, as the driver or drizzle (in its cause) reports it. */
export function sqlStateOf(error: unknown): unknown {
  const candidate = error as { code?: unknown; cause?: { code?: unknown } } | null;
  return candidate?.code ?? candidate?.cause?.code;
}

/** Whether a database error is a unique-constraint violation (SQLSTATE 23505), as the driver or drizzle reports it. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === "23505";
}

/** The name of the constraint a database error names (a unique violation's index, say), as the driver or drizzle reports it. */
export function violatedConstraint(error: unknown): unknown {
  const candidate = error as { constraint?: unknown; cause?: { constraint?: unknown } } | null;
  return candidate?.constraint ?? candidate?.cause?.constraint;
}
