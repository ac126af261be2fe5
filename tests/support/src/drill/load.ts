// The load of the failover test, from the test process across both instances of each service, until stopped
// (and at most `maxSteps` steps a loop): the OAuth code flow (authorize, code exchange, `/user.json` with the
// token, two refresh rotations), `/user.json` with issued tokens, permission-grid posts that queue pushes to the
// editorial app, completion batches, and Completion's reads (the staff course detail, stats, one learner's list).
// Every request is recorded in the log; what each write acknowledged is kept for the checks afterwards.
import type { ServiceProcess } from "../shipped.js";
import { asOfRestorePoint, type Attempt, type RestorePointTimes } from "./acknowledged-writes.js";
import { COURSE_KEY, LEARNERS, PASSWORD, PROBLEMS } from "./first-time-set-up.js";
import { csrfTokenOf, HttpClient } from "./http-client.js";
import type { RequestLog } from "./request-log.js";
import type { FailoverSystem } from "./services.js";
import { pause } from "./wait.js";

/** Requests that write: the first of them acknowledged after the kill measures the failover. */
export const WRITE_KINDS = ["GET /oauth/authorize", "POST /token (code)", "POST /token (refresh)", "POST /users/:uid/permissions", "POST completion-batch"];
/** Completion's reads: each must answer 200 throughout. */
export const COMPLETION_READ_KINDS = ["GET course detail (staff)", "GET stats", "GET course list (one learner)"];

/** Tokens issued for one authorization code, and the refresh rotations that followed. */
export interface Chain {
  code: string;
  /** When the code exchange was sent and acknowledged. */
  sentAt: number;
  at: number;
  accessToken: string;
  /** The refresh token to present next: the exchange's, then each acknowledged rotation's. */
  refreshToken: string;
  rotations: Rotation[];
  /**
   * Why the chain ended on purpose, when it did: a rotation went unanswered (503 or no answer) and the same refresh
   * token presented again was refused as used, so that rotation had committed and Sign-on revoked the grant (S10).
   */
  ended: string | null;
  /** An acknowledged refresh token refused: a lost write. */
  lost: string | null;
}

export interface Rotation {
  /** The refresh token presented, which the rotation retired. */
  presented: string;
  accessToken: string;
  refreshToken: string;
  sentAt: number;
  at: number;
}

/** What a round of load did, for the checks. */
export interface LoadRecord {
  chains: Chain[];
  /** `/user.json` answers with a chain's access token: a 401 for a chain not ended on purpose is a lost token. */
  userJson: { chain: Chain; status: number; at: number }[];
  /** Per grid user, the grid posts in order: whether `admin` was ticked. */
  gridPosts: Map<string, Attempt<boolean>[]>;
  /** Per learner, per block, the completion values sent, in order. */
  batches: Map<string, Map<string, Attempt<number>[]>>;
}

/** A record for a round of load; with `previous`, the grid posts and completion batches go on from that round's. */
export function newLoadRecord(previous?: LoadRecord): LoadRecord {
  return { chains: [], userJson: [], gridPosts: previous?.gridPosts ?? new Map(), batches: previous?.batches ?? new Map() };
}

/**
 * Rewinds a record's grid posts and completion batches to what a restore to `point` left (see asOfRestorePoint),
 * so that the next round's checks go on from the restored cluster.
 */
export function rewindToRestorePoint(record: LoadRecord, point: RestorePointTimes): void {
  for (const [uid, attempts] of record.gridPosts) record.gridPosts.set(uid, asOfRestorePoint(attempts, point));
  for (const blocks of record.batches.values()) for (const [block, attempts] of blocks) blocks.set(block, asOfRestorePoint(attempts, point));
}

export interface LoadOptions {
  /** The reading token of Completion's reads, asked again before each read (the test swaps it before the kill). */
  readerToken: () => string;
  /** At most this many steps a loop. */
  maxSteps: number;
}

export interface RunningLoad {
  /** Stops every loop after its current step (a rotation in doubt is settled first) and waits for them. */
  stop(): Promise<void>;
}

/** The other instance of a pair each step: instance `n % 2`. */
const nth = <T>(pair: readonly [T, T], n: number): T => pair[n % 2] as T;

/** Runs `step` until stopped or `maxSteps` done, with a short pause between steps so no loop starves the others (or the cluster). */
async function loop(stopped: () => boolean, maxSteps: number, step: (n: number) => Promise<void>): Promise<void> {
  for (let n = 0; n < maxSteps && !stopped(); n++) {
    await step(n);
    await pause(10);
  }
}

/** Signs `email` (whose password is `password`) in at `service` with `client`, retrying until it works (before the machine is lost). */
export async function signIn(client: HttpClient, service: ServiceProcess, email: string, password = PASSWORD): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const form = await client.send("GET /sign-in", service, "/sign-in", { headers: { accept: "text/html" } });
    const csrf = csrfTokenOf(form.body);
    if (csrf !== undefined) {
      const posted = await client.send("POST /sign-in", service, "/sign-in", {
        method: "POST",
        headers: { accept: "text/html" },
        form: { _csrf: csrf, return_to: "/", email, password },
      });
      if (posted.status === 303) return;
    }
    await pause(200);
  }
  throw new Error(`could not sign ${email} in`);
}

/** What `POST /token` answered in its body, when it is an OAuth error. */
function oauthError(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: string }).error;
  } catch {
    return undefined;
  }
}

/** How long one refresh rotation is retried while Sign-on answers 503 or nothing. */
const rotationWindowMs = 150_000;

/** Browsers signed in once, for every load run: the person of the code flow and the grid's administrator. */
export interface Sessions {
  browser: HttpClient;
  admin: HttpClient;
  gridCsrf: string;
}

export async function signInSessions(system: FailoverSystem, log: RequestLog): Promise<Sessions> {
  const browser = new HttpClient(log);
  await signIn(browser, system.signon[0], system.userEmail);
  const admin = new HttpClient(log);
  await signIn(admin, system.signon[1], system.adminEmail);
  const page = await admin.send("GET /users/:uid/permissions", system.signon[0], `/users/${system.gridUsers[0]}/permissions`, { headers: { accept: "text/html" } });
  const gridCsrf = csrfTokenOf(page.body);
  if (gridCsrf === undefined) throw new Error(`no permission grid form (${page.status})`);
  return { browser, admin, gridCsrf };
}

/** Starts every loop of the load; see the file's comment. */
export function startLoad(system: FailoverSystem, sessions: Sessions, log: RequestLog, record: LoadRecord, options: LoadOptions): RunningLoad {
  let stopped = false;
  const isStopped = () => stopped;
  const { clientId, clientSecret, redirectUri } = system.oauthClient;
  const client = { client_id: clientId, client_secret: clientSecret };
  const { browser, admin, gridCsrf } = sessions;

  /**
   * One refresh rotation of `chain`; retried with the same token, at each instance in turn, while unanswered. The
   * window outlasts every fault of the drills (a 55 s freeze and the failover after it), so an unanswered chain
   * means Sign-on did not come back, not that the fault was long.
   */
  const rotate = async (chain: Chain, n: number): Promise<void> => {
    let unanswered = 0;
    const giveUpAt = Date.now() + rotationWindowMs;
    for (let attempt = 0; Date.now() < giveUpAt; attempt++) {
      const sentAt = Date.now();
      const answer = await browser.send("POST /token (refresh)", nth(system.signon, n + attempt), "/token", {
        method: "POST",
        form: { grant_type: "refresh_token", refresh_token: chain.refreshToken, ...client },
      });
      if (answer.status === 200) {
        const tokens = JSON.parse(answer.body) as { access_token: string; refresh_token: string };
        chain.rotations.push({ presented: chain.refreshToken, accessToken: tokens.access_token, refreshToken: tokens.refresh_token, sentAt, at: Date.now() });
        chain.refreshToken = tokens.refresh_token;
        chain.accessToken = tokens.access_token;
        return;
      }
      if (answer.status === 400 && oauthError(answer.body) === "invalid_grant") {
        if (unanswered > 0) chain.ended = `refresh token refused as used after ${unanswered} unanswered rotation(s): ${answer.body}`;
        else chain.lost = `acknowledged refresh token refused: ${answer.body}`;
        return;
      }
      if (answer.status !== 503 && answer.status !== 0) {
        chain.lost = `refresh answered ${answer.status}: ${answer.body.slice(0, 300)}`;
        return;
      }
      unanswered += 1;
      await pause(250);
    }
    chain.lost = `no rotation answered in ${rotationWindowMs / 1000} s (${unanswered} attempts)`;
  };

  // The code flow of a signed-in browser, two at once: authorize at one instance, exchange the code at the other,
  // read /user.json with the access token, then rotate the refresh token twice.
  const codeFlows = [0, 1].map((flow) =>
    loop(isStopped, options.maxSteps, async (n) => {
      const authorizeUrl = `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: `s${flow}-${n}` })}`;
      const authorized = await browser.send("GET /oauth/authorize", nth(system.signon, n + flow), authorizeUrl, { headers: { accept: "text/html" } });
      const code = authorized.status === 302 && authorized.location !== null ? new URL(authorized.location).searchParams.get("code") : null;
      if (code === null) return;
      const sentAt = Date.now();
      const exchanged = await browser.send("POST /token (code)", nth(system.signon, n + flow + 1), "/token", {
        method: "POST",
        form: { grant_type: "authorization_code", code, redirect_uri: redirectUri, ...client },
      });
      if (exchanged.status !== 200) return;
      const tokens = JSON.parse(exchanged.body) as { access_token: string; refresh_token: string };
      const chain: Chain = { code, sentAt, at: Date.now(), accessToken: tokens.access_token, refreshToken: tokens.refresh_token, rotations: [], ended: null, lost: null };
      record.chains.push(chain);
      const read = await browser.send("GET /user.json", nth(system.signon, n + flow), "/user.json", { headers: { authorization: `Bearer ${chain.accessToken}` } });
      record.userJson.push({ chain, status: read.status, at: Date.now() });
      for (let rotation = 0; rotation < 2 && chain.ended === null && chain.lost === null; rotation++) await rotate(chain, n + flow + rotation);
    }),
  );

  // /user.json with the latest tokens issued (a chain's newest access token), at each instance in turn.
  const reader = new HttpClient(log);
  const userJson = loop(isStopped, options.maxSteps, async (n) => {
    const live = record.chains.filter((chain) => chain.ended === null && chain.lost === null).slice(-20);
    const chain = live[n % Math.max(1, live.length)];
    if (chain === undefined) return;
    const read = await reader.send("GET /user.json", nth(system.signon, n), "/user.json", { headers: { authorization: `Bearer ${chain.accessToken}` } });
    record.userJson.push({ chain, status: read.status, at: Date.now() });
  });

  // The administrator toggling `admin` on the editorial app for each grid user in turn: each post queues a push.
  const ticked = new Map<string, boolean>();
  const grid = loop(isStopped, options.maxSteps, async (n) => {
    const uid = system.gridUsers[n % system.gridUsers.length] as string;
    const value = !(ticked.get(uid) ?? false);
    ticked.set(uid, value);
    const permissions = [`${system.editorialAppId}:signin`, ...(value ? [`${system.editorialAppId}:admin`] : [])];
    const sentAt = Date.now();
    const posted = await admin.send("POST /users/:uid/permissions", nth(system.signon, n), `/users/${uid}/permissions`, {
      method: "POST",
      headers: { accept: "text/html" },
      form: { _csrf: gridCsrf, permissions },
    });
    const attempts = record.gridPosts.get(uid) ?? [];
    attempts.push({ value, acknowledged: posted.status === 303, sentAt, at: Date.now() });
    record.gridPosts.set(uid, attempts);
  });

  // One writer per learner, sending completion batches to each Completion instance in turn.
  const api = new HttpClient(log);
  const batches = LEARNERS.map((username, learner) => {
    const sent = record.batches.get(username) ?? new Map<string, Attempt<number>[]>();
    record.batches.set(username, sent);
    let sequence = [...sent.values()].reduce((count, attempts) => count + attempts.length, 0);
    return loop(isStopped, options.maxSteps, async (n) => {
      sequence += 1;
      const block = PROBLEMS[sequence % PROBLEMS.length] as string;
      const value = ((sequence + learner) % 5) / 4;
      const sentAt = Date.now();
      const answer = await api.send("POST completion-batch", nth(system.completion, n + learner), "/api/completion/v1/completion-batch", {
        method: "POST",
        headers: { authorization: `Bearer ${system.completionTokens.writer}`, "content-type": "application/json" },
        body: JSON.stringify({ username, course_key: COURSE_KEY, blocks: { [block]: value } }),
      });
      const attempts = sent.get(block) ?? [];
      attempts.push({ value, acknowledged: answer.status === 200, sentAt, at: Date.now() });
      sent.set(block, attempts);
    });
  });

  // Completion's reads, each at both instances in turn, with the reading token of the moment.
  const readPaths: [string, string][] = [
    [COMPLETION_READ_KINDS[0] as string, `/api/completion/v1/course/${COURSE_KEY}/?requested_fields=username`],
    [COMPLETION_READ_KINDS[1] as string, `/api/completion/v1/stats/${COURSE_KEY}/`],
    [COMPLETION_READ_KINDS[2] as string, `/api/completion/v1/course/?username=${LEARNERS[0]}`],
  ];
  const reads = readPaths.map(([kind, path], which) =>
    loop(isStopped, options.maxSteps, async (n) => {
      await api.send(kind, nth(system.completion, n + which), path, { headers: { authorization: `Bearer ${options.readerToken()}` } });
    }),
  );

  const all = Promise.all([...codeFlows, userJson, grid, ...batches, ...reads]);
  return {
    async stop() {
      stopped = true;
      await all;
    },
  };
}
