/** The same server's `name` database: `url` with its path replaced (its query, the TLS settings, kept). */
export function inDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
