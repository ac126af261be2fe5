import { freePort } from "@tessera/db/testing";

/** `count` free ports on 127.0.0.1, all different (each is free when drawn; none is listened on yet). */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
