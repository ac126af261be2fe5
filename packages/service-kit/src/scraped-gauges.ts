import { isDatabaseUnavailable } from "@tessera/db/faults";
import { Counter, Gauge, type Registry } from "prom-client";

/** One gauge whose values come from a row read at scrape time. */
export interface ScrapedGauge<Row> {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /**
   * `counter`: a total that only grows, kept where `row` comes from (a count
   * in the database, say), shown as a Prometheus counter; while the read
   * fails it keeps its last value, since a gap would read as a reset.
   * Default `gauge`.
   */
  type?: "gauge" | "counter";
  /** The gauge's values in `row`: one number, or one per label set. */
  values(row: Row): number | readonly { labels: Record<string, string>; value: number }[];
}

/**
 * Registers gauges that are filled at scrape time from one read (typically
 * one cheap SQL query): however many gauges, a scrape runs `read` once. When
 * the read fails, `onError` is told and, for that scrape, labelled gauges
 * show no series and unlabelled ones show `NaN`, rather than an old value.
 * While the database cannot be reached, `onError` is told once, not on every
 * scrape, until a read succeeds again. A spec of `type` `counter` becomes a
 * counter read the same way, which keeps its last values when a read fails.
 */
export function registerScrapedGauges<Row>(
  registry: Registry,
  read: () => Promise<Row>,
  gauges: readonly ScrapedGauge<Row>[],
  onError: (error: unknown) => void,
): void {
  let inFlight: Promise<Row> | null = null;
  // prom-client collects every metric of a scrape at once: they share the read in flight.
  const readOnce = (): Promise<Row> =>
    (inFlight ??= read().finally(() => {
      inFlight = null;
    }));
  let reported: Promise<Row> | null = null;
  let databaseDown = false;
  // Each scrape's outcome, shared by its metrics: a failed read is reported once, whichever metric awaited it first.
  const readForScrape = async (): Promise<{ row: Row } | null> => {
    const reading = readOnce();
    try {
      const row = await reading;
      databaseDown = false;
      return { row };
    } catch (error) {
      if (reported !== reading && !(databaseDown && isDatabaseUnavailable(error))) onError(error);
      if (isDatabaseUnavailable(error)) databaseDown = true;
      reported = reading;
      return null;
    }
  };
  for (const spec of gauges) {
    if (spec.type === "counter") {
      new Counter({
        name: spec.name,
        help: spec.help,
        labelNames: [...(spec.labelNames ?? [])],
        registers: [registry],
        async collect() {
          const read = await readForScrape();
          if (read === null) return;
          this.reset();
          const values = spec.values(read.row);
          if (typeof values === "number") this.inc(values);
          else for (const { labels, value } of values) this.inc(labels, value);
        },
      });
      continue;
    }
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: [...(spec.labelNames ?? [])],
      registers: [registry],
      async collect() {
        this.reset();
        const read = await readForScrape();
        if (read === null) {
          // An unlabelled gauge cannot be absent: NaN says "unknown" where 0 would say "empty queue".
          if ((spec.labelNames ?? []).length === 0) this.set(Number.NaN);
          return;
        }
        const values = spec.values(read.row);
        if (typeof values === "number") this.set(values);
        else for (const { labels, value } of values) this.set(labels, value);
      },
    });
  }
}
