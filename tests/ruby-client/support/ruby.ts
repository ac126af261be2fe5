import { spawnSync } from "node:child_process";

/** The Debian packages that hold Ruby and the libraries gds-sso is built on. */
export const rubyPackages = "ruby ruby-omniauth ruby-omniauth-oauth2 ruby-oauth2 ruby-rack ruby-webrick";

/**
 * Whether Ruby and the libraries the application needs load here; `null`
 * when they do, otherwise why not.
 */
export function rubyMissing(): string | null {
  const probe = spawnSync("ruby", ["-e", 'require "omniauth-oauth2"; require "oauth2"; require "rack"; require "webrick"'], { encoding: "utf8" });
  if (probe.error) return "ruby is not installed";
  if (probe.status !== 0) return `a library is missing: ${probe.stderr.trim().split("\n")[0] ?? ""}`;
  return null;
}
