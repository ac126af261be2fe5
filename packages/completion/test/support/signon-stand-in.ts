import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A STAND-IN FOR THE SIGN-ON SERVICE, for tests only: a real HTTP server on
 * 127.0.0.1 that answers `GET /user.json` (decision S11) for the tokens a test
 * registered, and 401 for anything else. It exists until the Sign-on
 * application can be started in tests; it never runs outside them.
 */
export interface SignonStandIn {
  readonly url: string;
  /** How many `/user.json` requests it has answered. */
  readonly requests: number;
  /** Registers a user and returns a fresh bearer token for it. */
  issueToken(user: { email: string; name?: string; permissions?: string[]; uid?: string }): { token: string; uid: string };
  /** Forgets a token, as revocation would. */
  revoke(token: string): void;
  close(): Promise<void>;
}

interface StandInUser {
  uid: string;
  name: string;
  email: string;
  permissions: string[];
}

/** Starts the Sign-on stand-in on a free loopback port. */
export async function startSignonStandIn(): Promise<SignonStandIn> {
  const tokens = new Map<string, StandInUser>();
  let requests = 0;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://stand-in");
    if (request.method !== "GET" || url.pathname !== "/user.json") {
      response.writeHead(404).end();
      return;
    }
    requests += 1;
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    const user = token === undefined ? undefined : tokens.get(token);
    if (!user) {
      response.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"', "content-type": "application/json" });
      response.end(JSON.stringify({ error: "invalid_token" }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        user: {
          ...user,
          permissions: [...user.permissions].sort(),
          organisation_slug: null,
          organisation_content_id: null,
          disabled: false,
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    issueToken(user) {
      const token = randomBytes(32).toString("hex");
      const uid = user.uid ?? randomUUID();
      tokens.set(token, { uid, name: user.name ?? user.email, email: user.email, permissions: ["signin", ...(user.permissions ?? [])] });
      return { token, uid };
    },
    revoke(token) {
      tokens.delete(token);
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
