// The error lines each service prints while the test runs, kept from the start (a service's output holds only
// its last 200 kB, which the request log fills in seconds): the evidence for a 500 or a failed read.
import type { ServiceProcess } from "../shipped.js";

/** Pino's error and fatal levels, an answer of 5xx other than 503, or a plain line that speaks of an error. */
const errorLine = /"level":(?:50|60)\b|"statusCode":5(?:0[0-24-9]|[1-9]\d)\b|^(?!\{).*(?:error|Error|ERROR)/;
/** Most lines kept per service. */
const keptPerService = 200;

export class ErrorLines {
  readonly #seen = new Map<string, Set<string>>();
  readonly #timer: NodeJS.Timeout;

  constructor(private readonly services: readonly ServiceProcess[]) {
    this.#timer = setInterval(() => this.collect(), 500);
    this.#timer.unref();
  }

  /** Reads every service's output for new error lines. */
  collect(): void {
    for (const service of this.services) {
      const seen = this.#seen.get(service.name) ?? new Set<string>();
      this.#seen.set(service.name, seen);
      for (const line of service.output().split("\n")) {
        if (seen.size >= keptPerService) break;
        if (errorLine.test(line)) seen.add(line.slice(0, 2000));
      }
    }
  }

  /** Every error line seen so far, each prefixed with its service's name. */
  lines(): string[] {
    this.collect();
    return [...this.#seen].flatMap(([name, lines]) => [...lines].map((line) => `${name}: ${line}`));
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
