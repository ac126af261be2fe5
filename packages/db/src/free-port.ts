import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest port this picks from: below it sit the well-known and commonly configured ports. */
const LOWEST_PORT = 10_000;

/**
 * Ports at or above LOWEST_PORT that `fetch` refuses to connect to (the Fetch standard's "bad ports"):
 * a server listening there could not be reached by the tests' own requests, or a browser's.
 */
const FETCH_BAD_PORTS = new Set([10_080]);

/**
 * A free TCP port on 127.0.0.1, for a server that must know its port before
 * it listens. It is drawn at random from below the kernel's ephemeral range:
 * a port from that range (what `listen(0)` hands out) can be taken by any
 * outgoing connection between this probe and the real listen, which on a
 * busy machine does happen.
 */
export async function freePort(): Promise<number> {
  const [lowestEphemeral] = ephemeralPortRange();
  for (let attempt = 0; attempt < 50 && lowestEphemeral - LOWEST_PORT > 1_000; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (lowestEphemeral - LOWEST_PORT));
    if (!FETCH_BAD_PORTS.has(port) && (await canListen(port))) return port;
  }
  return kernelPort();
}

/** The kernel's range for outgoing connections' local ports (Linux's default where it cannot be read). */
function ephemeralPortRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // Not Linux: fall through to the usual range.
  }
  return [32_768, 60_999];
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
