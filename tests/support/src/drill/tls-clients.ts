// Clients that try an address of the deployment and say what they got: "accepted", or "refused: …" with how
// (tests/failover/tls.test.ts and the certificate rotation drill).
import { connect as connectTcp } from "node:net";
import { connect as connectTls, type ConnectionOptions } from "node:tls";
import pg from "pg";

/** What an address answered one kind of client: `accepted`, or `refused` with how. */
export type ListenerAnswer = "accepted" | `refused: ${string}`;

/**
 * A TLS client at `port`: after the handshake it sends `probe` (an HTTP request, or nothing) and waits. An answer
 * in HTTP (or pgBackRest's greeting) is "accepted"; an error or a close before any answer is "refused" (a server
 * that verifies the client's certificate after TLS 1.3's handshake refuses with an alert then), and so is silence.
 */
export function tlsClient(port: number, options: ConnectionOptions, probe: string | null): Promise<ListenerAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: ListenerAnswer) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(answer);
    };
    const socket = connectTls({ host: "127.0.0.1", port, servername: "localhost", ...options });
    socket.setTimeout(5000, () => settle("refused: no answer in 5 s"));
    socket.on("secureConnect", () => {
      if (probe !== null) socket.write(probe);
    });
    // An HTTP answer, or pgBackRest's greeting (it speaks first), is a client let in.
    socket.on("data", (data: Buffer) => {
      const text = data.toString("latin1");
      settle(text.startsWith("HTTP/") || text.startsWith('{"name":"pgBackRest"') ? "accepted" : `refused: answered ${JSON.stringify(text.slice(0, 40))}`);
    });
    socket.on("error", (error: NodeJS.ErrnoException) => settle(`refused: ${error.code ?? error.message}`));
    socket.on("close", () => settle("refused: closed"));
  });
}

/** A client in clear at `port`: an HTTP request (or, for pgBackRest, a line) that must not be answered in HTTP. */
export function clearClient(port: number): Promise<ListenerAnswer> {
  return new Promise((resolve) => {
    let received = "";
    const socket = connectTcp({ host: "127.0.0.1", port });
    const settle = () => {
      socket.destroy();
      resolve(received.startsWith("HTTP/1.1 2") || received.startsWith("HTTP/1.0 2") ? "accepted" : `refused: ${received.length === 0 ? "closed" : `answered ${JSON.stringify(received.slice(0, 40))}`}`);
    };
    socket.setTimeout(3000, settle);
    socket.on("connect", () => socket.write("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"));
    socket.on("data", (data: Buffer) => (received += data.toString("latin1")));
    socket.on("error", settle);
    socket.on("close", settle);
  });
}

/** A PostgreSQL client at `port` with `ssl` settings (or none): whether it could run a query, or the server's refusal. */
export async function postgresClient(url: string, port: number, ssl: pg.ClientConfig["ssl"]): Promise<ListenerAnswer> {
  const parsed = new URL(url);
  const client = new pg.Client({ host: "127.0.0.1", port, user: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password), database: "postgres", ssl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return `refused: ${code ?? ""} ${message.split("\n")[0]!.slice(0, 120)}`.replace(/\s+/g, " ").trim() as ListenerAnswer;
  }
  try {
    await client.query("select 1");
    return "accepted";
  } finally {
    await client.end();
  }
}
