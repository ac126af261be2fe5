// A PostgreSQL store for node-oidc-provider, so that the peer can also be
// measured as it runs in production: every code, token and grant a durable
// row, each change its own commit. One table holds every model's payloads.
import { dropDatabase, recreateDatabase } from "@tessera/db/testing";
import type { Adapter, AdapterPayload } from "oidc-provider";
import pg from "pg";

const schema = `
  create table if not exists oidc_payloads (
    model text not null,
    id text not null,
    payload jsonb not null,
    grant_id text,
    user_code text,
    uid text,
    expires_at timestamptz,
    consumed_at timestamptz,
    primary key (model, id)
  );
  create index if not exists oidc_payloads_grant_id on oidc_payloads (grant_id);
  create index if not exists oidc_payloads_user_code on oidc_payloads (user_code) where user_code is not null;
  create index if not exists oidc_payloads_uid on oidc_payloads (uid) where uid is not null`;

interface PayloadRow {
  payload: AdapterPayload;
  consumed: number | null;
}

/** Creates the table on `pool`'s database and returns an adapter class whose statements go to whatever pool `use` set last. */
async function postgresAdapter(pool: pg.Pool): Promise<{ Adapter: new (model: string) => Adapter; use(pool: pg.Pool): void }> {
  await pool.query(schema);
  let current = pool;

  // Every statement is a named prepared one, as Sign-on's are, so that neither side pays for planning per request.
  const findOne = async (name: string, where: string, values: unknown[]): Promise<AdapterPayload | undefined> => {
    const { rows } = await current.query<PayloadRow>({
      name: `oidc_find_by_${name}`,
      text: `select payload, extract(epoch from consumed_at)::int as consumed from oidc_payloads
              where ${where} and (expires_at is null or expires_at > now())`,
      values,
    });
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed === null ? row.payload : { ...row.payload, consumed: row.consumed };
  };

  class PostgresAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await current.query({
        name: "oidc_upsert",
        text: `insert into oidc_payloads (model, id, payload, grant_id, user_code, uid, expires_at)
               values ($1, $2, $3, $4, $5, $6, case when $7::int > 0 then now() + make_interval(secs => $7::int) end)
               on conflict (model, id) do update
                 set payload = excluded.payload, grant_id = excluded.grant_id, user_code = excluded.user_code,
                     uid = excluded.uid, expires_at = excluded.expires_at`,
        values: [this.model, id, payload, payload.grantId ?? null, payload.userCode ?? null, payload.uid ?? null, expiresIn ?? 0],
      });
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return findOne("id", "model = $1 and id = $2", [this.model, id]);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return findOne("user_code", "model = $1 and user_code = $2", [this.model, userCode]);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return findOne("uid", "model = $1 and uid = $2", [this.model, uid]);
    }

    async consume(id: string): Promise<void> {
      await current.query({ name: "oidc_consume", text: "update oidc_payloads set consumed_at = now() where model = $1 and id = $2", values: [this.model, id] });
    }

    async destroy(id: string): Promise<void> {
      await current.query({ name: "oidc_destroy", text: "delete from oidc_payloads where model = $1 and id = $2", values: [this.model, id] });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await current.query({ name: "oidc_revoke_grant", text: "delete from oidc_payloads where grant_id = $1", values: [grantId] });
    }
  }

  return {
    Adapter: PostgresAdapter,
    use(next) {
      current = next;
    },
  };
}

/** The peer's store on a database of its own, created for the run and dropped after it. */
export interface PeerStoreOnPostgres {
  Adapter: new (model: string) => Adapter;
  /** From now on every change is a durable commit (the preparation's are not waited for). */
  durable(): Promise<void>;
  close(): Promise<void>;
}

export async function peerStoreOnPostgres(serverUrl: string, database: string): Promise<PeerStoreOnPostgres> {
  const url = await recreateDatabase(serverUrl, database);
  // Preparing hundreds of thousands of codes one commit at a time would take minutes: the preparation does not wait for WAL flushes.
  const preparing = new pg.Pool({ connectionString: url, max: 10, options: "-c synchronous_commit=off" });
  const serving = new pg.Pool({ connectionString: url, max: 10 });
  const store = await postgresAdapter(preparing);
  return {
    Adapter: store.Adapter,
    async durable() {
      store.use(serving);
      await preparing.query("vacuum analyze oidc_payloads");
      await preparing.query("checkpoint");
      await preparing.end();
    },
    async close() {
      await serving.end();
      await dropDatabase(serverUrl, database);
    },
  };
}
