import { rm } from "node:fs/promises";

/**
 * Removes a folder that held a database server's data. After a kill the
 * server's guard stops it a moment later, and it may still be writing its
 * files (the shutdown checkpoint) while the folder goes: the removal retries
 * while they appear.
 */
export function removeDataFolder(path: string): Promise<void> {
  return rm(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}
