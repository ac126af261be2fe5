// What the failover test checks once a round of load has stopped, each as a list of problems (empty when all
// is well) so that one failure does not hide the others: every acknowledged token, refresh rotation, code
// exchange, permission change and completion batch is there afterwards, and the pushes all arrived.
import { createHash } from "node:crypto";
import { allowedOutcomes, type RestorePointTimes } from "./acknowledged-writes.js";
import { COURSE_KEY, LEARNERS, PROBLEMS } from "./first-time-set-up.js";
import { HttpClient } from "./http-client.js";
import type { Chain, LoadRecord } from "./load.js";
import type { RequestLog } from "./request-log.js";
import type { FailoverSystem } from "./services.js";
import { waitFor } from "./wait.js";

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

/** Runs `work` on each item, `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

function oauthError(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: string }).error;
  } catch {
    return undefined;
  }
}

/** The first characters of a token, to name it in a problem. */
const short = (token: string) => `${token.slice(0, 8)}…`;

/**
 * Every access token the load was acknowledged (code exchanges and rotations) is stored on the primary, and each of
 * a chain not ended on purpose answers 200 at `/user.json` at both Sign-on instances; no acknowledged token was
 * refused while the load ran, and no acknowledged refresh token was refused as used.
 */
export async function tokenProblems(system: FailoverSystem, record: LoadRecord, log: RequestLog): Promise<string[]> {
  const problems: string[] = [];
  for (const chain of record.chains) if (chain.lost !== null) problems.push(`chain of code ${short(chain.code)}: ${chain.lost}`);
  for (const read of record.userJson) {
    if (read.status === 401 && read.chain.ended === null) problems.push(`GET /user.json answered 401 for an acknowledged token of code ${short(read.chain.code)} at ${new Date(read.at).toISOString()}`);
  }
  const issued = record.chains.flatMap((chain) => [chain, ...chain.rotations].map((tokens) => ({ chain, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken })));
  const { rows } = await system.pool.query<{ token_hash: string }>("select token_hash from signon.access_tokens where token_hash = any($1::text[])", [
    issued.map(({ accessToken }) => sha256(accessToken)),
  ]);
  const stored = new Set(rows.map((row) => row.token_hash));
  for (const { chain, accessToken } of issued) if (!stored.has(sha256(accessToken))) problems.push(`access token ${short(accessToken)} (code ${short(chain.code)}) acknowledged, not stored`);
  const refreshRows = await system.pool.query<{ token_hash: string }>("select token_hash from signon.refresh_tokens where token_hash = any($1::text[])", [
    issued.map(({ refreshToken }) => sha256(refreshToken)),
  ]);
  const storedRefresh = new Set(refreshRows.rows.map((row) => row.token_hash));
  for (const { chain, refreshToken } of issued) if (!storedRefresh.has(sha256(refreshToken))) problems.push(`refresh token ${short(refreshToken)} (code ${short(chain.code)}) acknowledged, not stored`);

  const client = new HttpClient(log);
  const live = issued.filter(({ chain }) => chain.ended === null && chain.lost === null);
  await eachLimited(
    live.flatMap((tokens) => system.signon.map((instance) => ({ ...tokens, instance }))),
    8,
    async ({ chain, accessToken, instance }) => {
      const answer = await client.send("check GET /user.json", instance, "/user.json", { headers: { authorization: `Bearer ${accessToken}` } });
      if (answer.status !== 200) problems.push(`access token ${short(accessToken)} (code ${short(chain.code)}) answered ${answer.status} at ${instance.name}: ${answer.body.slice(0, 200)}`);
    },
  );
  return problems;
}

/**
 * The refresh tokens: each chain's last one (not ended on purpose) rotates once more and its new access token works;
 * then every refresh token an acknowledged rotation retired is refused with `invalid_grant` (which revokes its
 * grant: the chains are of no use to the load afterwards). Returns the problems and how many of the retired
 * tokens were rotated before `before`.
 */
export async function refreshProblems(system: FailoverSystem, chains: readonly Chain[], log: RequestLog, before: number): Promise<{ problems: string[]; retiredBefore: number }> {
  const problems: string[] = [];
  const client = new HttpClient(log);
  const credentials = { client_id: system.oauthClient.clientId, client_secret: system.oauthClient.clientSecret };
  const live = chains.filter((chain) => chain.ended === null && chain.lost === null);
  await eachLimited(live, 4, async (chain) => {
    const instance = system.signon[chain.rotations.length % 2]!;
    const answer = await client.send("check POST /token (refresh)", instance, "/token", { method: "POST", form: { grant_type: "refresh_token", refresh_token: chain.refreshToken, ...credentials } });
    if (answer.status !== 200) {
      problems.push(`last refresh token ${short(chain.refreshToken)} (code ${short(chain.code)}) answered ${answer.status} at ${instance.name}: ${answer.body.slice(0, 200)}`);
      return;
    }
    const accessToken = (JSON.parse(answer.body) as { access_token: string }).access_token;
    const read = await client.send("check GET /user.json", system.signon[(chain.rotations.length + 1) % 2]!, "/user.json", { headers: { authorization: `Bearer ${accessToken}` } });
    if (read.status !== 200) problems.push(`access token from the last refresh token of code ${short(chain.code)} answered ${read.status}`);
  });
  const retired = chains.flatMap((chain) => chain.rotations.map((rotation) => ({ chain, rotation })));
  await eachLimited(retired, 4, async ({ chain, rotation }) => {
    const instance = system.signon[rotation.at % 2]!;
    const answer = await client.send("check POST /token (retired refresh)", instance, "/token", {
      method: "POST",
      form: { grant_type: "refresh_token", refresh_token: rotation.presented, ...credentials },
    });
    if (answer.status !== 400 || oauthError(answer.body) !== "invalid_grant") {
      problems.push(`refresh token ${short(rotation.presented)} (code ${short(chain.code)}) retired at ${new Date(rotation.at).toISOString()} answered ${answer.status} at ${instance.name}: ${answer.body.slice(0, 200)}`);
    }
  });
  return { problems, retiredBefore: retired.filter(({ rotation }) => rotation.at < before).length };
}

/** Every code the load exchanged (acknowledged) is refused when presented again. Returns the problems and how many were used before `before`. */
export async function codeProblems(system: FailoverSystem, chains: readonly Chain[], log: RequestLog, before: number): Promise<{ problems: string[]; usedBefore: number }> {
  const problems: string[] = [];
  const client = new HttpClient(log);
  const { clientId, clientSecret, redirectUri } = system.oauthClient;
  await eachLimited(chains, 4, async (chain) => {
    const instance = system.signon[chain.at % 2]!;
    const answer = await client.send("check POST /token (used code)", instance, "/token", {
      method: "POST",
      form: { grant_type: "authorization_code", code: chain.code, redirect_uri: redirectUri, client_id: clientId, client_secret: clientSecret },
    });
    if (answer.status !== 400 || oauthError(answer.body) !== "invalid_grant") {
      problems.push(`code ${short(chain.code)} used at ${new Date(chain.at).toISOString()} answered ${answer.status} at ${instance.name}: ${answer.body.slice(0, 200)}`);
    }
  });
  return { problems, usedBefore: chains.filter((chain) => chain.at < before).length };
}

/**
 * Each grid user's permissions on the editorial app are what the last acknowledged post (or a later unanswered
 * one) set; the push outbox drains with nothing failed; and the editorial app holds what Sign-on holds, for each.
 * Returns the problems and how many pushes were delivered after `since`.
 */
export async function pushProblems(system: FailoverSystem, record: LoadRecord, since: number): Promise<{ problems: string[]; deliveredSince: number }> {
  const problems: string[] = [];
  const held = async (uid: string) =>
    (
      await system.pool.query<{ permission: string }>("select permission from signon.user_permissions where user_uid = $1 and application_id = $2 order by permission", [
        uid,
        system.editorialAppId,
      ])
    ).rows.map((row) => row.permission);
  for (const uid of system.gridUsers) {
    const adminHeld = (await held(uid)).includes("admin");
    const allowed = allowedOutcomes(record.gridPosts.get(uid) ?? []).map((ticked) => ticked ?? false);
    if (!allowed.includes(adminHeld)) problems.push(`grid user ${uid}: admin ${adminHeld ? "held" : "not held"}, but the acknowledged posts leave ${JSON.stringify(allowed)}`);
  }
  const outbox = async () =>
    (
      await system.pool.query<{ status: string; n: number }>("select status, count(*)::int as n from signon.push_deliveries where application_id = $1 group by status", [system.editorialAppId])
    ).rows;
  await waitFor("the push outbox to drain", async () => ((await outbox()).every((row) => row.status === "delivered") ? true : null), { timeoutMs: 60_000 }).catch(async (error: unknown) => {
    problems.push(`${(error as Error).message.split("\n")[0]}: ${JSON.stringify(await outbox())}`);
  });
  for (const uid of system.gridUsers) {
    const { rows } = await system.pool.query<{ permissions: string[] }>("select permissions from signon_client.users where uid = $1", [uid]);
    const pushed = rows[0]?.permissions.slice().sort() ?? null;
    const expected = await held(uid);
    if (JSON.stringify(pushed) !== JSON.stringify(expected)) problems.push(`grid user ${uid}: the editorial app holds ${JSON.stringify(pushed)}, Sign-on ${JSON.stringify(expected)}`);
  }
  const { rows } = await system.pool.query<{ n: number }>("select count(*)::int as n from signon.push_deliveries where application_id = $1 and delivered_at > to_timestamp($2::double precision / 1000)", [
    system.editorialAppId,
    since,
  ]);
  return { problems, deliveredSince: rows[0]?.n ?? 0 };
}

interface DetailItem {
  username?: string;
  completion: { earned: number; possible: number | null };
}

/**
 * Every block's stored completion is the last acknowledged value (or a later unanswered one) for every learner; and
 * each Completion instance reads back, for each learner, the course's earned as the sum of what is stored and the
 * six problems as possible (waiting for the replicas and the stale worker, 30 s at most).
 */
export async function completionProblems(system: FailoverSystem, record: LoadRecord, log: RequestLog): Promise<string[]> {
  const problems: string[] = [];
  const { rows } = await system.pool.query<{ username: string; block_key: string; completion: number }>(
    "select l.username, c.block_key, c.completion from completion.block_completions c join completion.learners l on l.id = c.learner_id where c.course_key = $1",
    [COURSE_KEY],
  );
  const stored = new Map(rows.map((row) => [`${row.username} ${row.block_key}`, Number(row.completion)]));
  for (const username of LEARNERS) {
    for (const [block, attempts] of record.batches.get(username) ?? []) {
      const allowed = allowedOutcomes(attempts);
      const value = stored.get(`${username} ${block}`);
      if (!allowed.includes(value)) problems.push(`${username} ${block}: stored ${value}, acknowledged batches leave ${JSON.stringify(allowed)}`);
    }
  }
  const expected = new Map(LEARNERS.map((username) => [username, PROBLEMS.reduce((sum, block) => sum + (stored.get(`${username} ${block}`) ?? 0), 0)]));
  const client = new HttpClient(log);
  for (const instance of system.completion) {
    let last = "";
    const readBack = async () => {
      const answer = await client.send("check GET course detail", instance, `/api/completion/v1/course/${COURSE_KEY}/?requested_fields=username`, {
        headers: { authorization: `Bearer ${system.completionTokens.writer}` },
      });
      last = `${answer.status} ${answer.body.slice(0, 600)}`;
      if (answer.status !== 200) return null;
      const items = new Map((JSON.parse(answer.body) as { results: DetailItem[] }).results.map((item) => [item.username, item.completion]));
      const agrees = LEARNERS.every((username) => {
        const read = items.get(username);
        return read !== undefined && Math.abs(read.earned - (expected.get(username) ?? 0)) < 1e-6 && read.possible === PROBLEMS.length;
      });
      return agrees ? true : null;
    };
    await waitFor(`${instance.name} to read back the stored completions`, readBack, { timeoutMs: 30_000, intervalMs: 250 }).catch(() => {
      problems.push(`${instance.name} reads back ${last}; stored, earned of ${PROBLEMS.length}: ${JSON.stringify(Object.fromEntries(expected))}`);
    });
  }
  return problems;
}

/** What a restore to a point kept of the load's tokens: each acknowledged before it, and none sent after it. */
export interface RestoredTokens {
  problems: string[];
  /** Access tokens (code exchanges and rotations) acknowledged before the point, all of which must be stored. */
  before: number;
  /** Those sent after the point, none of which may be stored. */
  after: number;
}

/**
 * After a restore to `point`: every access and refresh token the load was acknowledged before the point's command
 * was sent is stored, and none sent after it was answered is; those in between may be either.
 */
export async function restorePointTokenProblems(system: FailoverSystem, chains: readonly Chain[], point: RestorePointTimes): Promise<RestoredTokens> {
  const issued = chains.flatMap((chain) => [chain, ...chain.rotations].map((tokens) => ({ code: chain.code, ...tokens })));
  const before = issued.filter((tokens) => tokens.at < point.sentAt);
  const after = issued.filter((tokens) => tokens.sentAt > point.at);
  const storedOf = async (table: "access_tokens" | "refresh_tokens", tokens: string[]) =>
    new Set((await system.pool.query<{ token_hash: string }>(`select token_hash from signon.${table} where token_hash = any($1::text[])`, [tokens.map(sha256)])).rows.map((row) => row.token_hash));
  const problems: string[] = [];
  for (const table of ["access_tokens", "refresh_tokens"] as const) {
    const pick = (tokens: { accessToken: string; refreshToken: string }) => (table === "access_tokens" ? tokens.accessToken : tokens.refreshToken);
    const storedBefore = await storedOf(table, before.map(pick));
    for (const tokens of before) if (!storedBefore.has(sha256(pick(tokens)))) problems.push(`${table}: ${short(pick(tokens))} (code ${short(tokens.code)}) acknowledged before the point, not restored`);
    const storedAfter = await storedOf(table, after.map(pick));
    for (const tokens of after) if (storedAfter.has(sha256(pick(tokens)))) problems.push(`${table}: ${short(pick(tokens))} (code ${short(tokens.code)}) sent after the point, restored`);
  }
  return { problems, before: before.length, after: after.length };
}
