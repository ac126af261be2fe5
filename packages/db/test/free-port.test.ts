import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "../src/free-port.js";

const [lowestEphemeral] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);

function listen(port: number) {
  const server = createServer();
  return new Promise<typeof server>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("freePort", () => {
  it("hands out ports below the kernel's ephemeral range, where no outgoing connection can take them", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(lowestEphemeral!);
    }
    expect(new Set(ports).size).toBeGreaterThan(1);
  });

  it("hands out a port that can be listened on", async () => {
    const server = await listen(await freePort());
    await new Promise((resolve) => server.close(resolve));
  });
});
