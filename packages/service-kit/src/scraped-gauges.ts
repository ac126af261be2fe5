import { isDatabaseUnavailable } from "@tessera/db/faults";
import { Gauge, type Registry } from "prom-client";

/** One gauge whose values come from a row read at scrape time. */
export interface ScrapedGauge<Row> {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** The gauge's values in `row`: one number, or one per label set. */
  values(row: Row): number | readonly { labels: Record<string, string>; value: number }[];
}

/**
 * Registers gauges that are filled at scrape time from one read (typically
 * one cheap SQL query): however many gauges, a scrape runs `read` once. When
 * the read fails, `onError` is told and, for that scrape, labelled gauges
 * show no series and unlabelled ones show `NaN`, rather than an old value.
 * While the database cannot be reached, `onError` is told once, not on every
 * scrape, until a read succeeds again.
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
  for (const spec of gauges) {
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: [...(spec.labelNames ?? [])],
      registers: [registry],
      async collect() {
        this.reset();
        const reading = readOnce();
        let row: Row;
        try {
          row = await reading;
          databaseDown = false;
        } catch (error) {
          if (reported !== reading && !(databaseDown && isDatabaseUnavailable(error))) onError(error);
          if (isDatabaseUnavailable(error)) databaseDown = true;
          reported = reading;
          // An unlabelled gauge cannot be absent: NaN says "unknown" where 0 would say "empty queue".
          if ((spec.labelNames ?? []).length === 0) this.set(Number.NaN);
          return;
        }
        const values = spec.values(row);
        if (typeof values === "number") this.set(values);
        else for (const { labels, value } of values) this.set(labels, value);
      },
    });
  }
}
