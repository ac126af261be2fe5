import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const variableName = /^[A-Z][A-Z0-9_]*$/;

/**
 * Calls `read` with an environment that records every variable name asked
 * for. Returns the names and what `read` returned.
 */
export function recordReads<T>(values: Record<string, string>, read: (env: Record<string, string | undefined>) => T): { names: Set<string>; result: T } {
  const names = new Set<string>();
  const note = (key: string | symbol) => {
    if (typeof key === "string" && variableName.test(key)) names.add(key);
  };
  const env = new Proxy({ ...values } as Record<string, string | undefined>, {
    get(target, key) {
      note(key);
      return typeof key === "string" ? target[key] : undefined;
    },
    has(target, key) {
      note(key);
      return key in target;
    },
  });
  return { names, result: read(env) };
}

/**
 * The variable names source files read by name: `env.NAME`, `env["NAME"]`
 * (also `process.env…`) and helper calls `helper(env, "NAME", …)`.
 */
export function variablesNamedInSource(files: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/\benv(?:\.|\[\s*["'`])([A-Z][A-Z0-9_]*)/g)) names.add(match[1] as string);
    for (const match of text.matchAll(/\(\s*env\s*,\s*["'`]([A-Z][A-Z0-9_]*)["'`]/g)) names.add(match[1] as string);
  }
  return names;
}

/** Whether some file gives `name` the fallback `value` in place: `env["NAME"] ?? "value"` or `env.NAME || "value"`. */
export function fallbackInSource(files: readonly string[], name: string, value: string): boolean {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`env(?:\\.${name}|\\[\\s*["'\`]${name}["'\`]\\s*\\])[^;\\n]*?(?:\\?\\?|\\|\\|)\\s*["'\`]${escaped}["'\`]`);
  return files.some((file) => pattern.test(readFileSync(file, "utf8")));
}

/** The `.ts`, `.mjs` and `.js` files under `directory`, recursively. */
export function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory)) {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mjs|js)$/.test(entry) && !entry.endsWith(".d.ts")) files.push(path);
  }
  return files;
}
