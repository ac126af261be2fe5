/** How often, at most, `/user.json` records a (user, application) sync. */
export const syncIntervalSeconds = 60;

/** Most keys remembered before the memory is cleared (each costs a few dozen bytes). */
const maxKeys = 100_000;

/**
 * Remembers when a key was last let through, so a write that may happen on
 * every request happens at most once per interval and key in this process.
 * The write itself still checks the stored time, for several processes.
 */
export class SyncThrottle {
  private readonly lastAt = new Map<string, number>();

  constructor(private readonly intervalMs: number) {}

  /** Whether the key is due (and, if so, marks it as done now). */
  due(key: string, nowMs: number): boolean {
    const last = this.lastAt.get(key);
    if (last !== undefined && nowMs - last < this.intervalMs && nowMs >= last) return false;
    if (this.lastAt.size >= maxKeys) this.lastAt.clear();
    this.lastAt.set(key, nowMs);
    return true;
  }
}
