import { isDatabaseUnavailable } from "@tessera/db/faults";
import { StoreUnavailableError } from "../errors.js";

/**
 * Runs one store operation; a failure meaning the database cannot be reached
 * (a restart, a failover, a lost connection) becomes a `StoreUnavailableError`
 * carrying it as `cause`, which the plugin answers with 503 instead of 500.
 */
export async function storeCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw new StoreUnavailableError("The session and user store cannot reach its database", { cause: error });
    throw error;
  }
}
