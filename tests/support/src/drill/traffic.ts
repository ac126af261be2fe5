// Traffic through HAProxy while the cluster fails over: a loop of single-row inserts (autocommit) that records
// each acknowledged one, and a loop of reads through the replica port. Each reconnects after an error, as a
// connection pool would.
import pg from "pg";
import { pause } from "./wait.js";

export interface Acknowledged {
  id: number;
  /** When the insert was sent, and when its success came back (ms since the epoch). */
  sentAt: number;
  at: number;
  /** The PostgreSQL port that served it (`inet_server_port()`): which node HAProxy reached. */
  serverPort: number;
}

export interface Failed {
  at: number;
  message: string;
}

/** Something the loop is doing until `stop()`. */
abstract class Loop {
  readonly failures: Failed[] = [];
  private stopped = false;
  private done: Promise<void> | null = null;
  private client: pg.Client | null = null;

  /** With `connectionPerStep`, each step runs on a new connection (so HAProxy picks a server for each). */
  constructor(
    private readonly url: string,
    private readonly options: { connectionPerStep?: boolean } = {},
  ) {}

  start(): this {
    this.done = this.run();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  protected abstract step(client: pg.Client): Promise<void>;

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        this.client ??= await connect(this.url);
        await this.step(this.client);
        if (this.options.connectionPerStep) {
          const client = this.client;
          this.client = null;
          await client.end();
        }
      } catch (error) {
        this.failures.push({ at: Date.now(), message: (error as Error).message });
        const client = this.client;
        this.client = null;
        await client?.end().catch(() => {});
        await pause(50);
      }
    }
    await this.client?.end().catch(() => {});
  }
}

/** Inserts rows with increasing ids into `writes`, one statement at a time, remembering each acknowledged one. */
export class WriteLoop extends Loop {
  readonly acknowledged: Acknowledged[] = [];
  private nextId = 1;

  protected async step(client: pg.Client): Promise<void> {
    const id = this.nextId++;
    const sentAt = Date.now();
    const { rows } = await client.query<{ port: number }>("insert into writes (id) values ($1) returning inet_server_port() as port", [id]);
    this.acknowledged.push({ id, sentAt, at: Date.now(), serverPort: rows[0]!.port });
  }
}

/** Reads the number of rows in `writes`, again and again, each time on a new connection. */
export class ReadLoop extends Loop {
  readonly answered: { at: number; serverPort: number }[] = [];

  constructor(url: string) {
    super(url, { connectionPerStep: true });
  }

  protected async step(client: pg.Client): Promise<void> {
    const { rows } = await client.query<{ port: number }>("select count(*), inet_server_port() as port from writes");
    this.answered.push({ at: Date.now(), serverPort: rows[0]!.port });
    await pause(20);
  }

  /** The longest run of failures with no answer in between. */
  longestFailureRun(): number {
    const events = [...this.failures.map((failure) => ({ at: failure.at, ok: false })), ...this.answered.map((answer) => ({ at: answer.at, ok: true }))].sort(
      (a, b) => a.at - b.at,
    );
    let longest = 0;
    let run = 0;
    for (const event of events) {
      run = event.ok ? 0 : run + 1;
      longest = Math.max(longest, run);
    }
    return longest;
  }
}

async function connect(url: string): Promise<pg.Client> {
  // A statement stuck on a lost server is given up on: it counts as unacknowledged, as for any client.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, query_timeout: 10_000 });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  return client;
}
