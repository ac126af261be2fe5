import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { formatLsn, parseLsn, parseReadUrls, ReadRouter, replicaName, type ReadTarget } from "../src/read-replicas.js";

/**
 * A server as the router sees it: the primary answers its WAL position, a
 * replica whether it is recovering and what it has replayed; `down` makes
 * every query fail as a refused connection does.
 */
class FakeServer {
  lsn = "0/1000";
  recovering = true;
  down = false;
  /** Every query waits for an answer that does not come, as behind a network that drops packets. */
  hangs = false;
  /** What a read (any query but the router's checks) fails with. */
  readError: Error | undefined;

  asPool(): pg.Pool {
    return {
      query: async (text: string) => {
        if (this.hangs) return new Promise(() => undefined);
        if (this.down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5433"), { code: "ECONNREFUSED" });
        if (this.readError !== undefined && !text.includes("pg_")) throw this.readError;
        if (text === "select 'which'") return { rows: [{ server: this.recovering ? "replica" : "primary" }] };
        if (text.includes("pg_current_wal_lsn") || text.includes("pg_current_wal_insert_lsn")) return { rows: [{ lsn: this.lsn }] };
        return { rows: [{ recovering: this.recovering, lsn: this.recovering ? this.lsn : null }] };
      },
    } as unknown as pg.Pool;
  }
}

let clock = 0;
const routers: ReadRouter[] = [];
afterEach(() => {
  for (const router of routers.splice(0)) router.stop();
});

function routerOf(primary: FakeServer, replicas: FakeServer[], maxLagMs = 5000) {
  const primaryPool = primary.asPool();
  const pools = replicas.map((replica) => replica.asPool());
  const router = new ReadRouter({
    primary: primaryPool,
    replicas: pools.map((pool, index) => ({ url: `postgres://reader:secret@replica${index + 1}:5432/tessera`, pool })),
    maxLagMs,
    checkIntervalMs: 3_600_000,
    checkTimeoutMs: 50,
    now: () => clock,
  });
  routers.push(router);
  const target = (read: ReadTarget = {}) => {
    const pool = router.pool(read);
    return pool === primaryPool ? "primary" : `replica${pools.indexOf(pool) + 1}`;
  };
  return { router, target };
}

describe("reads that tolerate lag", () => {
  it("all go to the primary when no replica is configured", async () => {
    const { router, target } = routerOf(new FakeServer(), []);
    await router.check();
    expect([target(), target()]).toEqual(["primary", "primary"]);
    expect(router.routed()).toEqual(new Map([["primary", 2]]));
  });

  it("go to the replicas in turn while they have replayed what the primary had", async () => {
    const primary = new FakeServer();
    const { router, target } = routerOf(primary, [new FakeServer(), new FakeServer()]);
    await router.check();
    expect([target(), target(), target()]).toEqual(["replica1", "replica2", "replica1"]);
    expect(router.replicas()).toEqual([
      { name: "replica1:5432/tessera", lagMs: 0, reachable: true },
      { name: "replica2:5432/tessera", lagMs: 0, reachable: true },
    ]);
    expect(Object.fromEntries(router.routed())).toEqual({ primary: 0, "replica1:5432/tessera": 2, "replica2:5432/tessera": 1 });
  });

  it("measure a replica's lag as the age of the oldest write it has not replayed, and skip it past the limit", async () => {
    const primary = new FakeServer();
    const stuck = new FakeServer();
    const { router, target } = routerOf(primary, [stuck], 5000);
    clock = 10_000;
    await router.check();
    expect(target()).toBe("replica1");
    // The primary writes on; the replica replays nothing more.
    for (const [at, lsn] of [[11_000, "0/2000"], [13_000, "0/3000"], [15_000, "0/4000"]] as const) {
      clock = at;
      primary.lsn = lsn;
      await router.check();
    }
    expect(router.replicas()[0]?.lagMs).toBe(4000);
    expect(target()).toBe("replica1");
    clock = 16_001;
    await router.check();
    expect(router.replicas()[0]?.lagMs).toBe(5001);
    expect(target()).toBe("primary");
    // It catches up with the primary's position of the last check: no lag, whatever the time since the last write.
    stuck.lsn = "0/4000";
    clock = 60_000;
    await router.check();
    expect(router.replicas()[0]?.lagMs).toBe(0);
    expect(target()).toBe("replica1");
  });

  it("skip a replica that cannot be reached, and use it again once it answers", async () => {
    const replica = new FakeServer();
    const { router, target } = routerOf(new FakeServer(), [replica]);
    replica.down = true;
    await router.check();
    expect(router.replicas()[0]).toMatchObject({ reachable: false, lagMs: null });
    expect(target()).toBe("primary");
    replica.down = false;
    await router.check();
    expect(target()).toBe("replica1");
  });

  it("skip a replica that stops answering, once its check's time is up, and check the others meanwhile", async () => {
    const hanging = new FakeServer();
    const { router, target } = routerOf(new FakeServer(), [hanging, new FakeServer()]);
    await router.check();
    expect([target(), target()]).toEqual(["replica1", "replica2"]);
    hanging.hangs = true;
    await router.check();
    expect(router.replicas().map((replica) => replica.reachable)).toEqual([false, true]);
    expect([target(), target()]).toEqual(["replica2", "replica2"]);
    hanging.hangs = false;
    await router.check();
    expect([target(), target()]).toEqual(["replica1", "replica2"]);
  });

  it("keep going to the replicas while the primary cannot be reached (a failover)", async () => {
    const primary = new FakeServer();
    const { router, target } = routerOf(primary, [new FakeServer()]);
    clock = 1000;
    await router.check();
    primary.down = true;
    clock = 30_000;
    await router.check();
    expect(router.replicas()[0]?.lagMs).toBe(0);
    expect(target()).toBe("replica1");
  });

  it("count a server that is no longer recovering (promoted) as not behind", async () => {
    const primary = new FakeServer();
    primary.lsn = "0/9000";
    const promoted = new FakeServer();
    promoted.recovering = false;
    const { router, target } = routerOf(primary, [promoted]);
    await router.check();
    expect(router.replicas()[0]?.lagMs).toBe(0);
    expect(target()).toBe("replica1");
  });

  it("trust no replica before the primary's position has ever been read", async () => {
    const primary = new FakeServer();
    primary.down = true;
    const { router, target } = routerOf(primary, [new FakeServer()]);
    await router.check();
    expect(router.replicas()[0]).toMatchObject({ reachable: true, lagMs: null });
    expect(target()).toBe("primary");
  });
});

describe("a read that fails on a replica", () => {
  const which = async (pool: pg.Pool) => ((await pool.query<{ server: string }>("select 'which'")).rows[0] as { server: string }).server;
  const primaryServer = () => Object.assign(new FakeServer(), { recovering: false });

  it("is asked of the primary when the replica cannot be reached or gives no answer in time, and the replica is skipped at once", async () => {
    for (const error of [
      Object.assign(new Error("Query read timeout: no answer from the database within 2 s"), { code: "ETIMEDOUT" }),
      new Error("timeout exceeded when trying to connect"),
      new Error("Connection terminated due to connection timeout"),
    ]) {
      const replica = new FakeServer();
      const { router, target } = routerOf(primaryServer(), [replica]);
      await router.check();
      const pool = router.pool();
      replica.readError = error;
      expect(await which(pool)).toBe("primary");
      expect(router.replicas()[0]).toMatchObject({ reachable: false, lagMs: null });
      expect(target()).toBe("primary");
      expect([...router.retriedOnPrimary().values()]).toEqual([1]);
    }
  });

  it("fails as it is for any other reason, and the replica keeps serving", async () => {
    for (const error of [Object.assign(new Error('relation "x" does not exist'), { code: "42P01" }), Object.assign(new Error("cannot execute INSERT in a read-only transaction"), { code: "25006" })]) {
      const replica = new FakeServer();
      const { router, target } = routerOf(primaryServer(), [replica]);
      await router.check();
      const pool = router.pool();
      replica.readError = error;
      await expect(which(pool)).rejects.toBe(error);
      expect(target()).toBe("replica1");
      expect([...router.retriedOnPrimary().values()]).toEqual([0]);
    }
  });
});

describe("a read that follows its reader's own change", () => {
  it("goes to a replica that had replayed the change's position at its last check, and to the primary until one has", async () => {
    const primary = new FakeServer();
    const ahead = new FakeServer();
    const behind = new FakeServer();
    const { router, target } = routerOf(primary, [behind, ahead]);
    await router.check();
    // A change commits: the primary's position moves on, and the change's position is read after it.
    primary.lsn = "0/5000";
    const after = await router.writePosition();
    expect(after).toBe(parseLsn("0/5000"));
    const read = { after: after ?? 0n };
    // No check has seen a replica that far yet.
    expect([target(read), target(read)]).toEqual(["primary", "primary"]);
    ahead.lsn = "0/5000";
    await router.check();
    expect([target(read), target(read)]).toEqual(["replica2", "replica2"]);
    // Reads that follow no change go to either, in turn.
    expect([target(), target()]).toEqual(["replica1", "replica2"]);
    behind.lsn = "0/6000";
    await router.check();
    expect([target(read), target(read)]).toEqual(["replica1", "replica2"]);
  });

  it("goes to the primary where the change's position is not known", async () => {
    const { router, target } = routerOf(new FakeServer(), [new FakeServer()]);
    await router.check();
    expect([target({ primary: true }), target()]).toEqual(["primary", "replica1"]);
  });

  it("never goes to a server no longer recovering (promoted: it may not be the one written to), nor to one that cannot be reached", async () => {
    const primary = new FakeServer();
    const promoted = new FakeServer();
    promoted.recovering = false;
    const unreachable = new FakeServer();
    unreachable.lsn = "0/F000";
    const { router, target } = routerOf(primary, [unreachable, promoted]);
    unreachable.down = true;
    await router.check();
    expect([target({ after: parseLsn("0/1000") }), target({ after: parseLsn("0/F000") })]).toEqual(["primary", "primary"]);
    // Reads that follow no change still go to the promoted one.
    expect(target()).toBe("replica2");
  });

  it("has no position to go by while the primary does not answer", async () => {
    const primary = new FakeServer();
    const { router } = routerOf(primary, [new FakeServer()]);
    primary.down = true;
    expect(await router.writePosition()).toBeNull();
  });
});

describe("DATABASE_READ_URL", () => {
  it("takes one or more addresses, separated by spaces or commas, and none when empty", () => {
    expect(parseReadUrls(undefined)).toEqual([]);
    expect(parseReadUrls(" ")).toEqual([]);
    expect(parseReadUrls("postgres://a:5432/db")).toEqual(["postgres://a:5432/db"]);
    expect(parseReadUrls("postgres://a:5432/db,postgres://b:5432/db postgresql://c/db")).toEqual(["postgres://a:5432/db", "postgres://b:5432/db", "postgresql://c/db"]);
  });

  it("names a replica without its user or password", () => {
    expect(replicaName("postgres://reader:secret@db-2.internal:6432/tessera?sslmode=require")).toBe("db-2.internal:6432/tessera");
  });

  it("compares WAL positions as numbers", () => {
    expect(parseLsn("16/B374D848")).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn("0/FFFFFFFF") < parseLsn("1/0")).toBe(true);
  });

  it("writes WAL positions as PostgreSQL does", () => {
    for (const text of ["16/B374D848", "0/0", "FFFFFFFF/FFFFFFFF", "0/3000148"]) expect(formatLsn(parseLsn(text))).toBe(text);
  });
});
