import { accessSync, constants } from "node:fs";

/** Debian's chromium (`apt-get install chromium`), or the browser `CHROMIUM_PATH` names. */
export const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

/** `null` when chromium can be run from `chromiumPath`, else why not. */
export function chromiumMissing(): string | null {
  try {
    accessSync(chromiumPath, constants.X_OK);
    return null;
  } catch {
    return `no chromium at ${chromiumPath}`;
  }
}
