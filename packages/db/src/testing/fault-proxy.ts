import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy between database clients and a PostgreSQL server, for fault
 * tests: it forwards bytes both ways until told to cut every connection
 * (each side gets a reset, as after a network failure or a server restart),
 * to refuse new ones (its port stops listening, so connecting fails with
 * ECONNREFUSED, as while a server is down), to stall (connections stay open
 * but no byte goes through either way, as when a network drops packets
 * without a reset), and to come back.
 *
 * ```ts
 * const proxy = await FaultProxy.start(database.url);
 * const pool = createPool({ url: proxy.url });
 * proxy.cutAll();          // every open connection dies mid-whatever
 * await proxy.refuse();    // nothing connects …
 * await proxy.accept();    // … until now
 * proxy.stall();           // connections open, new and old, but silent …
 * proxy.resume();          // … until now: what was held back goes through
 * await proxy.close();
 * ```
 */
export class FaultProxy {
  /** A TCP address, or the path of a Unix socket (the embedded server's). */
  readonly #target: { host: string; port: number } | { path: string };
  readonly #pairs = new Set<Pair>();
  #listener: Server | null = null;
  #stalled = false;
  #port = 0;
  /** Connections cut so far by {@link cutAll}. */
  cuts = 0;

  private constructor(target: { host: string; port: number } | { path: string }) {
    this.#target = target;
  }

  /** Starts a proxy on a free port of 127.0.0.1 in front of the server of `databaseUrl`. */
  static async start(databaseUrl: string): Promise<FaultProxy> {
    const parsed = new URL(databaseUrl);
    const port = Number(parsed.port || "5432");
    // A socket folder in the `host` parameter (libpq's way) wins over the URL's host name.
    const socketFolder = parsed.searchParams.get("host");
    const proxy = new FaultProxy(
      socketFolder?.startsWith("/") ? { path: `${socketFolder}/.s.PGSQL.${port}` } : { host: parsed.hostname || "127.0.0.1", port },
    );
    await proxy.accept();
    return proxy;
  }

  /** The port the proxy listens on (kept across {@link refuse} and {@link accept}). */
  get port(): number {
    return this.#port;
  }

  /** `databaseUrl` with host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.searchParams.delete("host");
    url.hostname = "127.0.0.1";
    url.port = String(this.#port);
    return url.toString();
  }

  /** How many connections are open through the proxy now. */
  get open(): number {
    return this.#pairs.size;
  }

  /** Resets every open connection, both towards the clients and towards the server. Returns how many it cut. */
  cutAll(): number {
    const count = this.#pairs.size;
    for (const pair of this.#pairs) {
      pair.client.resetAndDestroy();
      // A Unix socket has no reset: closing it is what the server sees of a failed network.
      if ("path" in this.#target) pair.server.destroy();
      else pair.server.resetAndDestroy();
    }
    this.#pairs.clear();
    this.cuts += count;
    return count;
  }

  /** Stops listening: new connections are refused until {@link accept}. Open connections are left alone. */
  async refuse(): Promise<void> {
    const listener = this.#listener;
    this.#listener = null;
    if (listener === null) return;
    await new Promise<void>((resolve) => {
      listener.close(() => resolve());
      // close() waits for open connections to end; the proxy tracks those itself, so do not wait.
      setImmediate(resolve);
    });
  }

  /** Listens (again, on the same port) and forwards new connections. */
  async accept(): Promise<void> {
    if (this.#listener !== null) return;
    const listener = createServer((client) => this.#forward(client));
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(this.#port, "127.0.0.1", () => {
        listener.off("error", reject);
        resolve();
      });
    });
    const address = listener.address();
    if (address === null || typeof address === "string") throw new Error("the fault proxy has no port");
    this.#port = address.port;
    this.#listener = listener;
  }

  /** Whether the proxy is stalled ({@link stall}). */
  get stalled(): boolean {
    return this.#stalled;
  }

  /**
   * Stops forwarding bytes, both ways, on every connection, open or opened
   * from now on, without closing any: clients wait for answers that do not
   * come, as behind a network that drops packets silently. What is held back
   * goes through after {@link resume} (TCP keeps it, as it retransmits).
   */
  stall(): void {
    this.#stalled = true;
  }

  /** Forwards bytes again after {@link stall}, first those held back. */
  resume(): void {
    this.#stalled = false;
    for (const pair of this.#pairs) pair.flush();
  }

  /** Cuts every connection and stops listening. */
  async close(): Promise<void> {
    await this.refuse();
    this.cutAll();
  }

  #forward(client: Socket): void {
    const server = "path" in this.#target ? connect(this.#target.path) : connect(this.#target.port, this.#target.host);
    // Bytes read while stalled, in order, per direction: written on resume().
    const held: { to: Socket; chunk: Buffer }[] = [];
    const pair: Pair = {
      client,
      server,
      flush: () => {
        for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
      },
    };
    this.#pairs.add(pair);
    const end = () => {
      this.#pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (this.#stalled) held.push({ to, chunk });
      else if (!to.destroyed) to.write(chunk);
    };
    client.on("error", end).on("close", end).on("data", forward(server));
    server.on("error", end).on("close", end).on("data", forward(client));
  }
}

/** A client's connection and the one opened for it to the server. */
interface Pair {
  client: Socket;
  server: Socket;
  /** Writes what was held back while stalled. */
  flush(): void;
}
