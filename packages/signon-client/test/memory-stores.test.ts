import { MemorySessionStore } from "../src/storage/memory-session-store.js";
import { MemoryUserStore } from "../src/storage/memory-user-store.js";
import { beforeEach } from "vitest";
import { storeContract } from "./support/store-contract.js";

let stores = { users: new MemoryUserStore(), sessions: new MemorySessionStore() };
beforeEach(() => {
  stores = { users: new MemoryUserStore(), sessions: new MemorySessionStore() };
});

storeContract("memory", () => stores);
