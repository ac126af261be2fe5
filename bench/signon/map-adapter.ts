// An unbounded in-memory store for node-oidc-provider. Its bundled memory
// adapter is an LRU of 1,000 entries, which evicts the codes and refresh
// tokens a benchmark prepares in advance; this one keeps them all.
import type { Adapter, AdapterPayload } from "oidc-provider";

const store = new Map<string, AdapterPayload>();
const grants = new Map<string, Set<string>>();

export class MapAdapter implements Adapter {
  constructor(private readonly model: string) {}

  private key(id: string): string {
    return `${this.model}:${id}`;
  }

  upsert(id: string, payload: AdapterPayload): Promise<void> {
    const key = this.key(id);
    store.set(key, payload);
    if (payload.grantId) {
      const members = grants.get(payload.grantId) ?? new Set<string>();
      members.add(key);
      grants.set(payload.grantId, members);
    }
    return Promise.resolve();
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return Promise.resolve(store.get(this.key(id)));
  }

  findByUserCode(): Promise<AdapterPayload | undefined> {
    return Promise.resolve(undefined);
  }

  findByUid(): Promise<AdapterPayload | undefined> {
    return Promise.resolve(undefined);
  }

  consume(id: string): Promise<void> {
    const payload = store.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    return Promise.resolve();
  }

  destroy(id: string): Promise<void> {
    store.delete(this.key(id));
    return Promise.resolve();
  }

  revokeByGrantId(grantId: string): Promise<void> {
    for (const key of grants.get(grantId) ?? []) store.delete(key);
    grants.delete(grantId);
    return Promise.resolve();
  }
}
