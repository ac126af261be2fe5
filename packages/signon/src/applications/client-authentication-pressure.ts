import type { SignonContext } from "../context.js";
import type { SignonDatabase } from "../db/database.js";
import { countFloodedClients, readClientAuthenticationPressure, type ClientAuthenticationPressure } from "../repositories/client-authentication-floods.js";
import { clientAuthenticationFlood } from "../security/failure-limit.js";

/** Failed authentications of an application's client id now, and its latest flood (S15), for its page. */
export async function clientAuthenticationPressure(
  ctx: SignonContext,
  application: { id: string; clientId: string },
): Promise<ClientAuthenticationPressure> {
  return readClientAuthenticationPressure(ctx.db, application, `${clientAuthenticationFlood.name}:${application.clientId}`, ctx.now());
}

/** How many client ids are flooded now (over 100 failures in the open window): the metric of S15. */
export async function floodedClientCount(db: SignonDatabase, now: Date): Promise<number> {
  return countFloodedClients(db, `${clientAuthenticationFlood.name}:`, clientAuthenticationFlood.maxFailures, now);
}
