// What a process allocates, by the function that allocates it: V8's sampling heap profiler, keeping the samples of
// objects already collected, so that short-lived garbage (what a request leaves for the next scavenge) counts too.
import { Session } from "node:inspector/promises";

/** Bytes allocated per request, in all and by the site (function, file and line) that allocated them. */
export interface AllocationSummary {
  bytesPerRequest: number;
  sites: { site: string; bytesPerRequest: number }[];
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

const session = new Session();
let sampling = false;

/** Starts sampling: one sample per 512 bytes allocated, on average. */
export async function startAllocationSampling(): Promise<void> {
  if (sampling) return;
  session.connect();
  // Both include… options are in the protocol since V8 11 (Node's types lag behind); without them a scavenged object
  // leaves no sample.
  const options = { samplingInterval: 512, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true };
  await session.post("HeapProfiler.startSampling", options);
  sampling = true;
}

/** Stops sampling and sums what was allocated over `requests` requests, the largest `top` sites first. */
export async function stopAllocationSampling(requests: number, top = 8): Promise<AllocationSummary> {
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: SamplingNode } };
  session.disconnect();
  sampling = false;
  const bySite = new Map<string, number>();
  let total = 0;
  const pending: SamplingNode[] = [profile.head];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*node_modules\//, "").replace(/^.*\/(packages|bench)\//, "$1/");
    const site = `${functionName || "(anonymous)"} ${file}${file ? `:${lineNumber + 1}` : ""}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    total += node.selfSize;
    pending.push(...node.children);
  }
  const sites = [...bySite]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([site, bytes]) => ({ site, bytesPerRequest: bytes / requests }));
  return { bytesPerRequest: total / requests, sites };
}
