// The floor under any token endpoint that stores what it issues, on this
// machine: Fastify with Sign-on's server options (request logging as shipped)
// and its form parser, and for each POST /token one durable insert (a
// prepared statement, its own commit) and a fixed-shape token answer. It
// authenticates no client, checks no code and audits nothing. Sign-on's
// token endpoint does all of this and more, so it cannot pass the floor's rate.
import type { AddressInfo } from "node:net";
import { createPool } from "@tessera/db";
import { dropDatabase, recreateDatabase } from "@tessera/db/testing";
import { loadConfig, signonServerOptions } from "@tessera/signon";
import Fastify from "fastify";
import { registerFormParser } from "../../packages/signon/src/http/form-content-type.js";
import { randomHex, sha256Hex } from "../../packages/signon/src/security/random.js";

const storeToken = {
  name: "floor_store_token",
  text: "insert into floor_tokens (token_hash, created_at) values ($1, $2)",
};

export interface FloorServer {
  url: string;
  close(): Promise<void>;
}

export async function startFloorOnPostgres(serverUrl: string, benchDatabase = "tessera_bench_floor", port = 0): Promise<FloorServer> {
  const url = await recreateDatabase(serverUrl, benchDatabase);
  const pool = createPool({ url, max: 10 });
  await pool.query("create table floor_tokens (id bigserial primary key, token_hash text not null, created_at timestamptz not null)");
  const config = loadConfig({ DATABASE_URL: url, SIGNON_PORT: "0" });

  const app = Fastify(signonServerOptions(config));
  registerFormParser(app);
  app.post("/token", async (_request, reply) => {
    const token = randomHex();
    await pool.query({ ...storeToken, values: [sha256Hex(token), new Date().toISOString()] });
    reply.header("cache-control", "no-store");
    return { access_token: token, token_type: "Bearer", expires_in: 7200 };
  });
  await app.listen({ host: "127.0.0.1", port });
  const address = app.server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${address.port}`,
    async close() {
      await app.close();
      await pool.end();
      await dropDatabase(serverUrl, benchDatabase);
    },
  };
}
