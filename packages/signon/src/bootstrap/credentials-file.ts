import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, basename } from "node:path";

/** What `signon apps create --json` prints, and what the example application reads. */
export interface ClientCredentials {
  name: string;
  client_id: string;
  client_secret: string;
  redirect_uris: readonly string[];
  permissions: readonly string[];
}

/**
 * Writes an application's credentials as JSON readable by the owner only
 * (mode 0600). The file is written under a fresh name and renamed into
 * place, so a reader never sees half a file and an older file's wider mode
 * is not kept.
 */
export async function writeCredentialsFile(path: string, credentials: ClientCredentials): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
