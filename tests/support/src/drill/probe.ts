// A writer that asks every node directly, not through HAProxy, to commit a row, several times a second: whatever
// a node acknowledges must still be on the primary afterwards. A primary that resumed after a freeze, or any other
// second primary, that acknowledged a write while another primary did would lose one of them; and the nodes that
// acknowledged probes, in the order they did, show whether two ever took turns.
import { inDatabase } from "./database-url.js";
import pg from "pg";
import type { FailoverCluster } from "./cluster.js";
import { pause } from "./wait.js";

/** How long one probe may wait for its commit before it counts as not acknowledged (its connection is then dropped). */
const probeTimeoutMs = 3000;
const intervalMs = 200;

export interface ProbeAck {
  id: number;
  node: string;
  sentAt: number;
  at: number;
}

export class ProbeWriter {
  readonly acknowledged: ProbeAck[] = [];
  #next = 1;
  #running = true;
  readonly #loops: Promise<void>[];

  private constructor(
    private readonly cluster: FailoverCluster,
    private readonly database: string,
  ) {
    this.#loops = cluster.nodes.map((node) => this.#loop(node.name, inDatabase(node.url, database)));
  }

  /** Creates the probe table in its own database and starts writing to every node. */
  static async start(cluster: FailoverCluster, database = "probes"): Promise<ProbeWriter> {
    const url = await cluster.createDatabase(database);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("create table probes (id integer primary key, node text not null, sent_at bigint not null)");
    } finally {
      await client.end();
    }
    return new ProbeWriter(cluster, database);
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  /** Acknowledged probes missing from the current primary (read through HAProxy's primary port). */
  async missing(): Promise<ProbeAck[]> {
    const client = new pg.Client({ connectionString: inDatabase(this.cluster.primaryUrl, this.database) });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: number }>("select id from probes");
      const stored = new Set(rows.map((row) => row.id));
      return this.acknowledged.filter((ack) => !stored.has(ack.id));
    } finally {
      await client.end();
    }
  }

  /**
   * The nodes that acknowledged probes sent in [from, to), in the order they did, each once per turn: one node
   * before a failover and another after it is `["node1", "node2"]`; two primaries taking turns is longer.
   */
  turns(from: number, to: number): string[] {
    const turns: string[] = [];
    for (const ack of [...this.acknowledged].sort((a, b) => a.at - b.at)) {
      if (ack.sentAt < from || ack.sentAt >= to) continue;
      if (turns.at(-1) !== ack.node) turns.push(ack.node);
    }
    return turns;
  }

  async #loop(node: string, url: string): Promise<void> {
    let client: pg.Client | null = null;
    while (this.#running) {
      try {
        if (client === null) {
          client = new pg.Client({ connectionString: url, connectionTimeoutMillis: probeTimeoutMs });
          client.on("error", () => {});
          await client.connect();
        }
        // Only a server that says it is not in recovery is asked to write (a standby would refuse).
        const { rows } = await withTimeout(client.query<{ recovering: boolean }>("select pg_is_in_recovery() as recovering"));
        if (rows[0]?.recovering === false) {
          const id = this.#next++;
          const sentAt = Date.now();
          await withTimeout(client.query("insert into probes (id, node, sent_at) values ($1, $2, $3)", [id, node, sentAt]));
          this.acknowledged.push({ id, node, sentAt, at: Date.now() });
        }
      } catch {
        // A frozen or lost node does not answer, a demoted one refuses: drop the connection, try again.
        destroy(client);
        client = null;
      }
      await pause(intervalMs);
    }
    destroy(client);
  }
}

function withTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  return Promise.race([work, new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error("no answer")), probeTimeoutMs)))]).finally(() =>
    clearTimeout(timer),
  );
}

/** Drops a client's connection at once, without waiting for a server that may be frozen. */
function destroy(client: pg.Client | null): void {
  if (client === null) return;
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  void client.end().catch(() => undefined);
}
