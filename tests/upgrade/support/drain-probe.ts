// How an instance drains on SIGTERM, seen by a client that holds kept-alive connections to it (as a balancer does
// that has not yet taken it out): requests keep going on those connections from before the signal until the
// process has exited. Each must be answered in full, or refused before it was sent (a connection refused or
// closed while idle, which a client opens again elsewhere); none may be answered 5xx or reset mid-request.
import { Agent, request } from "node:http";

export interface DrainProbe {
  /** Stops once the instance has exited; what the requests met. */
  finish(): Promise<DrainFigures>;
}

export interface DrainFigures {
  /** Requests answered, by status. */
  answered: Record<string, number>;
  /** Requests that got no answer, by error code: ECONNREFUSED (after the listener closed) is expected. */
  unanswered: Record<string, number>;
}

const count = (tally: Record<string, number>, key: string) => (tally[key] = (tally[key] ?? 0) + 1);

/** Starts `loops` request loops on kept-alive connections to `url` + `path`. */
export function startDrainProbe(url: string, path: string, loops = 4): DrainProbe {
  const agent = new Agent({ keepAlive: true, maxSockets: loops });
  const figures: DrainFigures = { answered: {}, unanswered: {} };
  let stopped = false;
  const once = () =>
    new Promise<void>((resolve) => {
      const sent = request(`${url}${path}`, { agent, headers: { accept: "application/json" } }, (response) => {
        response.resume();
        response.on("end", () => {
          count(figures.answered, String(response.statusCode));
          resolve();
        });
        response.on("error", (error: NodeJS.ErrnoException) => {
          count(figures.unanswered, `${error.code ?? error.message} (mid-answer)`);
          resolve();
        });
      });
      sent.on("error", (error: NodeJS.ErrnoException) => {
        count(figures.unanswered, error.code ?? error.message);
        resolve();
      });
      sent.end();
    });
  const running = Array.from({ length: loops }, async () => {
    while (!stopped) {
      await once();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  });
  return {
    async finish() {
      stopped = true;
      await Promise.all(running);
      agent.destroy();
      return figures;
    },
  };
}
