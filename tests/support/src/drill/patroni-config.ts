// A Patroni node's configuration folder, as the deployment has it (/etc/patroni): deploy/patroni/cluster.yml as it
// ships, the node's own node.yml with the test's addresses, folders and passwords, and one file more that puts its
// Unix socket in its own folder. Patroni reads every .yml file of the folder in name order.
import { chownSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { patroniClusterFile, patroniNodeFile, patroniSocketFile, type PatroniNodeAddresses } from "./deployment-files.js";
import type { RunAs } from "./processes.js";

export type NodeSpec = Omit<PatroniNodeAddresses, "etcdHosts">;

/** Writes the node's configuration folder under its directory and returns the folder. */
export function writePatroniConfig(node: NodeSpec, etcdHosts: string[], runAs: RunAs | undefined): string {
  const folder = join(node.directory, "patroni");
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const files: [string, string][] = [
    ["cluster.yml", patroniClusterFile()],
    ["node.yml", patroniNodeFile({ ...node, etcdHosts })],
    ["zz-test-socket.yml", patroniSocketFile(node.directory)],
  ];
  for (const [name, text] of files) writeFileSync(join(folder, name), text, { mode: 0o600 });
  if (runAs) for (const path of [folder, ...files.map(([name]) => join(folder, name))]) chownSync(path, runAs.uid, runAs.gid);
  return folder;
}

/** The timings deploy/patroni/cluster.yml gives Patroni, read back from it for the tests' bounds. */
export function patroniTimings(): { ttl: number; loopWait: number; retryTimeout: number } {
  const text = patroniClusterFile();
  const read = (key: string) => {
    const match = new RegExp(`^\\s+${key}: (\\d+)$`, "m").exec(text);
    if (!match) throw new Error(`deploy/patroni/cluster.yml has no ${key}`);
    return Number(match[1]);
  };
  return { ttl: read("ttl"), loopWait: read("loop_wait"), retryTimeout: read("retry_timeout") };
}
