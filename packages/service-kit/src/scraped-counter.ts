import { Counter, type Registry } from "prom-client";

/**
 * A counter without labels whose value is read at scrape time from
 * something that counts by itself (a cache's count of stale answers, say),
 * so nothing is incremented on the request path.
 */
export function registerScrapedCounter(registry: Registry, counter: { name: string; help: string; value: () => number }): void {
  new Counter({
    name: counter.name,
    help: counter.help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(counter.value());
    },
  });
}
