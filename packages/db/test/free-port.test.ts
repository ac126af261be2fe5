import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freePort } from "../src/free-port.js";

const [lowestEphemeral] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);

function listen(port: number) {
  const server = createServer();
  return new Promise<typeof server>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("freePort", () => {
  it("hands out ports below the kernel's ephemeral range, where no outgoing connection can take them", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(lowestEphemeral!);
    }
    expect(new Set(ports).size).toBeGreaterThan(1);
  });

  it("never hands out a port that fetch refuses to connect to (10080, a Fetch standard's bad port)", async () => {
    // The first draw lands on 10080, the next one elsewhere.
    const toBadPort = (10_080 - 10_000) / (lowestEphemeral! - 10_000);
    vi.spyOn(Math, "random").mockReturnValueOnce(toBadPort).mockReturnValueOnce(0.5);
    const port = await freePort();
    expect(port).not.toBe(10_080);
    await expect(fetch("http://127.0.0.1:10080/")).rejects.toThrow();
  });

  it("hands out a port that can be listened on", async () => {
    const server = await listen(await freePort());
    await new Promise((resolve) => server.close(resolve));
  });
});
