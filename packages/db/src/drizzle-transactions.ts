import { sql } from "drizzle-orm";
import { NodePgSession, NodePgTransaction } from "drizzle-orm/node-postgres";
import pg from "pg";

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
 */
async function transactionReleasingItsClient(this: SessionInternals, body: TransactionBody, config?: TransactionConfig): Promise<unknown> {
  if (!(this.client instanceof pg.Pool)) return original.call(this as never, body as never, config);
  const client = await this.client.connect();
  let broken: Error | undefined;
  try {
    const session = new NodePgSession(client, this.dialect, this.schema, this.options);
    const tx = new NodePgTransaction<Record<string, unknown>, never>(this.dialect, session, this.schema as never);
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
