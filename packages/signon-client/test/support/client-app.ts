import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach } from "vitest";
import { signonClientPlugin, type SignonPluginOptions } from "../../src/fastify/index.js";
import { MemorySessionStore } from "../../src/storage/memory-session-store.js";
import { MemoryUserStore } from "../../src/storage/memory-user-store.js";
import type { SessionStore } from "../../src/storage/session-store.js";
import type { UserStore } from "../../src/storage/user-store.js";
import type { SignonUserJson } from "../../src/user.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { StandInSignon } from "../../src/testing/stand-in-signon.js";

export const CLIENT = {
  clientId: "editorial-client-id",
  clientSecret: "editorial-client-secret",
  redirectUri: "http://app.test/auth/gds/callback",
};

/** Everything one test needs: the stand-in Sign-on, the client app, its stores and the clock. */
export interface Harness {
  clock: ManualClock;
  signon: StandInSignon;
  app: FastifyInstance;
  users: UserStore;
  sessions: SessionStore;
  /** While `down`, the client app's outbound calls fail as if Sign-on were unreachable. */
  network: { down: boolean };
}

export interface HarnessOptions {
  /** Collect the client app's log lines (every level) here. */
  logLines?: string[];
  expiresInSeconds?: number;
  rotateRefreshTokens?: boolean;
  plugin?: Partial<SignonPluginOptions>;
  users?: UserStore;
  sessions?: SessionStore;
}

/** A client application with a page for each guard, the way an application would use the plugin. */
export async function buildClientApp(
  signonUrl: string,
  clock: ManualClock,
  stores: { users: UserStore; sessions: SessionStore },
  plugin: Partial<SignonPluginOptions> = {},
  logLines?: string[],
): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logLines ? { level: "trace", stream: { write: (line: string) => logLines.push(line) } } : false,
  });
  await app.register(signonClientPlugin, {
    signonUrl,
    ...CLIENT,
    userStore: stores.users,
    sessionStore: stores.sessions,
    clock,
    ...plugin,
  });
  app.get("/", { preHandler: app.signonClient.requireSignIn }, (request) => ({ user: request.signonUser }));
  app.get("/admin", { preHandler: app.signonClient.requirePermission("admin") }, () => ({ admin: true }));
  app.get("/either", { preHandler: app.signonClient.requireAnyPermission(["admin", "editor"]) }, () => ({ ok: true }));
  app.get("/both", { preHandler: app.signonClient.requireAllPermissions(["admin", "editor"]) }, () => ({ ok: true }));
  app.get("/api/whoami", { onRequest: app.signonClient.requireBearerToken() }, (request) => ({
    user: request.signonApiUser,
  }));
  return app;
}

/** Registers beforeEach/afterEach that start a stand-in Sign-on and a client app for every test. */
export function useHarness(options: HarnessOptions = {}): Harness {
  const harness = {} as Harness;
  beforeEach(async () => {
    harness.clock = new ManualClock();
    harness.signon = new StandInSignon({
      client: CLIENT,
      clock: harness.clock,
      ...(options.expiresInSeconds === undefined ? {} : { expiresInSeconds: options.expiresInSeconds }),
      ...(options.rotateRefreshTokens === undefined ? {} : { rotateRefreshTokens: options.rotateRefreshTokens }),
    });
    await harness.signon.listen();
    harness.users = options.users ?? new MemoryUserStore();
    harness.sessions = options.sessions ?? new MemorySessionStore();
    harness.network = { down: false };
    const network = harness.network;
    harness.app = await buildClientApp(
      harness.signon.url,
      harness.clock,
      { users: harness.users, sessions: harness.sessions },
      {
        fetch: (input, init) =>
          network.down ? Promise.reject(new TypeError("fetch failed")) : globalThis.fetch(input, init),
        ...options.plugin,
      },
      options.logLines,
    );
  });
  afterEach(async () => {
    await harness.app.close();
    await harness.signon.close();
  });
  return harness;
}

let nextUser = 1;

/** A Sign-on user as `/user.json` describes it; `signin` always included. */
export function createUser(overrides: Partial<SignonUserJson> & { permissions?: string[] } = {}): SignonUserJson {
  const n = nextUser++;
  return {
    uid: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
    name: `User ${n}`,
    email: `user${n}@example.org`,
    organisation_slug: "government-digital-service",
    organisation_content_id: "af07d5a5-df63-4ddc-9383-6a666845ebe9",
    disabled: false,
    ...overrides,
    permissions: ["signin", ...(overrides.permissions ?? [])],
  };
}
