import { open, readFile, rename, unlink, writeFile } from "node:fs/promises";

/** What a lock file says: which process holds the data directory and where it serves it. */
export interface LockRecord {
  pid: number;
  /** Connection string once the server listens; `null` while it starts. */
  url: string | null;
}

/** The lock file of a data directory: a sibling file `<dataDir>.lock`. */
export function lockPathOf(dataDir: string): string {
  return `${dataDir}.lock`;
}

/**
 * Creates the lock file if no one holds it. Returns `true` when this process
 * now holds the lock, `false` when the file already exists.
 */
export async function tryCreateLock(lockPath: string): Promise<boolean> {
  try {
    const handle = await open(lockPath, "wx");
    try {
      await handle.writeFile(JSON.stringify({ pid: process.pid, url: null } satisfies LockRecord));
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Records the server's connection string in a lock this process holds (atomically). */
export async function publishUrl(lockPath: string, url: string): Promise<void> {
  const temporary = `${lockPath}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify({ pid: process.pid, url } satisfies LockRecord));
  await rename(temporary, lockPath);
}

/** Reads a lock file; `null` when it is gone or not (yet) complete JSON. */
export async function readLock(lockPath: string): Promise<LockRecord | null> {
  let text: string;
  try {
    text = await readFile(lockPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockRecord>;
    if (typeof parsed.pid !== "number") return null;
    return { pid: parsed.pid, url: typeof parsed.url === "string" ? parsed.url : null };
  } catch {
    return null;
  }
}

/** Whether a process with this id runs (on this machine). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes a lock file, but only while it still says what `expected` says, so a
 * lock another process has just taken is left alone.
 */
export async function removeLockIf(lockPath: string, expected: LockRecord): Promise<void> {
  const current = await readLock(lockPath);
  if (current === null || current.pid !== expected.pid || current.url !== expected.url) return;
  await unlink(lockPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}
