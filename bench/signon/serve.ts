// One side of the benchmark in a process of its own, so that the load
// generator never competes with it for the event loop. Started by run.ts
// through fork(); sends what the load needs, then waits for "stop".
import { startOidcProvider, peerClient } from "./oidc-provider-peer.js";
import { peerStoreOnPostgres } from "./postgres-adapter.js";
import { startFloorOnPostgres } from "./floor-server.js";
import { startSignonOnPostgres } from "./signon-server.js";
import { randomHex } from "../../packages/signon/src/security/random.js";

/** What a side hands to the load generator. */
export interface Prepared {
  url: string;
  tokenPath: string;
  userPath: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  codes: string[];
  /** Codes whose exchange signs an ID token (scope openid). */
  openIdCodes: string[];
  refreshTokens: string[];
  accessToken: string;
}

const side = process.argv[2];
const count = Number(process.argv[3] ?? 60_000);
const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const database = process.env.BENCH_SIGNON_DATABASE || "tessera_bench_signon";
const signonPort = Number(process.env.BENCH_SIGNON_PORT || 0);
const peerPort = Number(process.env.BENCH_PEER_PORT || 0);
const peerOnPostgresPort = Number(process.env.BENCH_PEER_POSTGRES_PORT || 0);
const peerDatabase = process.env.BENCH_PEER_DATABASE || "tessera_bench_peer";
const floorPort = Number(process.env.BENCH_FLOOR_PORT || 0);
const floorDatabase = process.env.BENCH_FLOOR_DATABASE || "tessera_bench_floor";

let prepared: Prepared;
let close: () => Promise<void>;
if (side === "signon") {
  const signon = await startSignonOnPostgres(serverUrl, database, signonPort);
  prepared = {
    url: signon.url,
    tokenPath: "/token",
    userPath: "/user.json",
    clientId: signon.clientId,
    clientSecret: signon.clientSecret,
    redirectUri: signon.redirectUri,
    codes: await signon.issueCodes(count),
    openIdCodes: await signon.issueOpenIdCodes(count),
    refreshTokens: await signon.issueRefreshTokens(count),
    accessToken: await signon.issueAccessToken(),
  };
  await signon.settle();
  close = () => signon.close();
} else if (side === "oidc-provider" || side === "oidc-provider-postgres") {
  const store = side === "oidc-provider-postgres" ? await peerStoreOnPostgres(serverUrl, peerDatabase) : null;
  const peer = store ? await startOidcProvider(peerOnPostgresPort, store.Adapter) : await startOidcProvider(peerPort);
  prepared = {
    url: peer.url,
    tokenPath: "/token",
    userPath: "/me",
    clientId: peerClient.client_id,
    clientSecret: peerClient.client_secret,
    redirectUri: peerClient.redirect_uri,
    codes: await Promise.all(Array.from({ length: count }, () => peer.issueCode(false))),
    openIdCodes: await Promise.all(Array.from({ length: count }, () => peer.issueCode(true))),
    refreshTokens: await Promise.all(Array.from({ length: count }, () => peer.issueRefreshToken())),
    accessToken: await peer.issueAccessToken(),
  };
  await store?.durable();
  close = async () => {
    await peer.close();
    await store?.close();
  };
} else if (side === "floor") {
  // Answers /token only, whatever the code: the codes just make its requests the size of a real exchange.
  const floor = await startFloorOnPostgres(serverUrl, floorDatabase, floorPort);
  prepared = {
    url: floor.url,
    tokenPath: "/token",
    userPath: "/token",
    clientId: "bench-floor",
    clientSecret: randomHex(),
    redirectUri: "https://client.example/callback",
    codes: Array.from({ length: count }, () => randomHex()),
    openIdCodes: [],
    refreshTokens: [],
    accessToken: "",
  };
  close = () => floor.close();
} else {
  throw new Error(`unknown side ${String(side)}`);
}

process.send?.(prepared);
process.on("message", (message) => {
  if (message === "stop") {
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  }
});
