import { sql } from "drizzle-orm";
import { NodePgSession, NodePgTransaction } from "drizzle-orm/node-postgres";
import pg from "pg";
import { retryingConflicts } from "./transaction-retries.js";

/** The parts of a drizzle `NodePgSession` its own `transaction` uses (private in its types). */
interface SessionInternals {
  client: pg.Pool | pg.PoolClient | pg.Client;
  dialect: ConstructorParameters<typeof NodePgSession>[1];
  schema: ConstructorParameters<typeof NodePgSession>[2];
  options: ConstructorParameters<typeof NodePgSession>[3];
}

type TransactionBody = (tx: NodePgTransaction<Record<string, unknown>, never>) => Promise<unknown>;
type TransactionConfig = Parameters<NodePgSession<Record<string, unknown>, never>["transaction"]>[1];

const original = NodePgSession.prototype.transaction;

/**
 * drizzle-orm 0.45's `transaction` on a pool checks a client out and sends
 * `BEGIN` before its `try … finally release()`: when the connection fails at
 * that moment (a restart, a failover, a reset), the client is never given
 * back, and after as many such failures as the pool has connections every
 * later checkout waits until it times out. So transactions on a pool go
 * through this version instead: the same statements (`BEGIN` with the
 * configuration, the body, `COMMIT`, or `ROLLBACK` and the body's error), with
 * the client always released, and dropped by the pool when its connection
 * has failed or its rollback did. A rollback that fails does not hide the
 * body's error. A session on one client (a nested transaction's) keeps
 * drizzle's own code, which releases nothing.
 *
 * A transaction on a pool that PostgreSQL ends with a deadlock (40P01) or a
 * serialization failure (40001) is run again, body and all, a few times
 * after a short random pause (`retryingConflicts`), and counted per pool:
 * a body must therefore do nothing outside the database that cannot be done
 * twice. A nested transaction (a savepoint) is not run again on its own: its
 * error ends the outer transaction, which is.
 */
async function transactionReleasingItsClient(this: SessionInternals, body: TransactionBody, config?: TransactionConfig): Promise<unknown> {
  const pool = this.client;
  if (!(pool instanceof pg.Pool)) return original.call(this as never, body as never, config);
  return retryingConflicts(pool, () => runOnce(this, pool, body, config));
}

/** One run of a transaction on a client of `pool`, which is always given back. */
async function runOnce(session: SessionInternals, pool: pg.Pool, body: TransactionBody, config: TransactionConfig | undefined): Promise<unknown> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const inner = new NodePgSession(client, session.dialect, session.schema, session.options);
    const tx = new NodePgTransaction<Record<string, unknown>, never>(session.dialect, inner, session.schema as never);
    const configSql = config ? (tx as unknown as { getTransactionConfigSQL(config: TransactionConfig): ReturnType<typeof sql> }).getTransactionConfigSQL(config) : undefined;
    await tx.execute(sql`begin${configSql ? sql` ${configSql}` : undefined}`);
    let result: unknown;
    try {
      result = await body(tx);
    } catch (error) {
      await tx.execute(sql`rollback`).catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    }
    await tx.execute(sql`commit`);
    return result;
  } finally {
    client.release(broken);
  }
}

NodePgSession.prototype.transaction = transactionReleasingItsClient as unknown as typeof original;
