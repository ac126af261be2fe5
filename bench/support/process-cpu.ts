import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const ticksPerSecond = 100;

/**
 * CPU seconds (user and system, every thread) a process has used so far, from /proc; NaN where there is none.
 * With `reapedChildren`, also those of its children that have exited and been waited for.
 */
export function processCpuSeconds(pid: number, reapedChildren = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name, which is in parentheses and may hold spaces:
    // utime and stime are the 12th and 13th, cutime and cstime (waited-for children) the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const children = reapedChildren ? Number(fields[13]) + Number(fields[14]) : 0;
    return (Number(fields[11]) + Number(fields[12]) + children) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds used so far by every process of this machine whose command is `command` (say, PostgreSQL's
 * server and backends), counting those that have exited since in their parent's (a backend whose connection
 * closed, in the server's), so that the total never goes down.
 */
export function commandCpuSeconds(command: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return Number.NaN;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === command) total += processCpuSeconds(Number(entry), true) || 0;
    } catch {
      // The process has exited since the listing.
    }
  }
  return total;
}
