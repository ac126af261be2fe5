/** One row of a variable table in docs/configuration.md. */
export interface DocumentedVariable {
  name: string;
  /** The default as a literal value, when the Default cell is exactly one code span; else `null` (a described default). */
  literalDefault: string | null;
  /** The Default cell as written. */
  defaultCell: string;
}

/**
 * Reads the variable table under each `## ` heading of a Markdown document:
 * rows `| \`NAME\` | default | meaning |`. Returns heading → rows, in order.
 */
export function readVariableTables(markdown: string): Map<string, DocumentedVariable[]> {
  const sections = new Map<string, DocumentedVariable[]>();
  let heading: string | null = null;
  for (const line of markdown.split("\n")) {
    const title = /^## (.+)$/.exec(line);
    if (title) {
      heading = (title[1] as string).trim();
      continue;
    }
    if (heading === null || !line.startsWith("|")) continue;
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? "")?.[1];
    if (name === undefined) continue; // the header and separator rows
    const defaultCell = cells[1] ?? "";
    const literal = /^`([^`]*)`$/.exec(defaultCell)?.[1];
    const rows = sections.get(heading) ?? [];
    rows.push({ name, literalDefault: literal ?? null, defaultCell });
    sections.set(heading, rows);
  }
  return sections;
}
