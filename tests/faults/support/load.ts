import { csrfTokenOf, HttpClient } from "./http-client.js";
import { COURSE_KEY, LEARNERS, PASSWORD, PROBLEMS, type FaultSystem } from "./fault-system.js";
import type { Tally } from "./tally.js";

/** One write the load sent, and whether the service acknowledged it (2xx or the form's redirect). */
export interface Attempt<T> {
  value: T;
  acknowledged: boolean;
}

/** What the load did, for the checks afterwards. */
export interface LoadRecord {
  /** Access tokens issued by `POST /token` with scope openid (each an acknowledged write). */
  issuedTokens: string[];
  /** Code exchanges answered 200 without an ID token (none should be). */
  missingIdTokens: number;
  /** The grid posts in order: whether `admin` was ticked. */
  gridPosts: Attempt<boolean>[];
  /** Per learner, per block, the completion values sent, in order. */
  batches: Map<string, Map<string, Attempt<number>[]>>;
}

/** Runs `step` again and again until `stopped()`, one at a time, with a short pause so one loop cannot starve the others. */
async function loop(stopped: () => boolean, step: () => Promise<void>): Promise<void> {
  while (!stopped()) {
    await step();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Signs `email` in at Sign-on with `client`, retrying until it works (before the faults start). */
export async function signIn(system: FaultSystem, client: HttpClient, email: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const form = await client.send("GET /sign-in", `${system.signon.url}/sign-in`, { headers: { accept: "text/html" } });
    const csrf = csrfTokenOf(form.body);
    if (csrf !== undefined) {
      const posted = await client.send("POST /sign-in", `${system.signon.url}/sign-in`, {
        method: "POST",
        headers: { accept: "text/html" },
        form: new URLSearchParams({ _csrf: csrf, return_to: "/", email, password: PASSWORD }),
      });
      if (posted.status === 303) return;
    }
    await pause(200);
  }
  throw new Error(`could not sign ${email} in`);
}

/**
 * Starts the load on every part the issue names, each loop on its own until
 * `stop()` resolves: the OAuth code flow (authorize, code exchange),
 * `/user.json`, permission-grid posts (each one queues a push to the
 * editorial app), completion batches and completion reads, and sign-ins
 * started and API calls at the editorial app.
 */
export async function startLoad(system: FaultSystem, tally: Tally): Promise<{ record: LoadRecord; stop(): Promise<void> }> {
  let stopped = false;
  const isStopped = () => stopped;
  const record: LoadRecord = { issuedTokens: [], missingIdTokens: 0, gridPosts: [], batches: new Map() };

  // The OpenID Connect code flow of a signed-in browser: authorize (a code is written), exchange it for tokens
  // and an ID token (signed with a key read from the database), then read /userinfo with the access token.
  const browser = new HttpClient(tally);
  await signIn(system, browser, system.userEmail);
  const { clientId, clientSecret, redirectUri } = system.oauthClient;
  const authorizeUrl = `${system.signon.url}/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: "faults", scope: "openid profile email", nonce: "faults" })}`;
  const oauth = loop(isStopped, async () => {
    const authorized = await browser.send("GET /oauth/authorize", authorizeUrl, { headers: { accept: "text/html" } });
    const code = authorized.status === 302 && authorized.location !== null ? new URL(authorized.location).searchParams.get("code") : null;
    if (code === null) return;
    const exchanged = await browser.send("POST /token", `${system.signon.url}/token`, {
      method: "POST",
      form: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: clientId, client_secret: clientSecret }),
    });
    if (exchanged.status !== 200) return;
    const tokens = JSON.parse(exchanged.body) as { access_token: string; id_token?: string };
    record.issuedTokens.push(tokens.access_token);
    if (tokens.id_token === undefined) record.missingIdTokens += 1;
    await browser.send("GET /userinfo", `${system.signon.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  });

  // Two callers of /user.json.
  const reader = new HttpClient(tally);
  const userJson = [1, 2].map(() =>
    loop(isStopped, async () => {
      await reader.send("GET /user.json", `${system.signon.url}/user.json`, { headers: { authorization: `Bearer ${system.accessToken}` } });
    }),
  );

  // An administrator toggling `admin` on the editorial app for one person, through the permission grid.
  const admin = new HttpClient(tally);
  await signIn(system, admin, system.adminEmail);
  const gridUrl = `${system.signon.url}/users/${system.gridUser.uid}/permissions`;
  const gridPage = await admin.send("GET /users/:uid/permissions", gridUrl, { headers: { accept: "text/html" } });
  const csrf = csrfTokenOf(gridPage.body);
  if (csrf === undefined) throw new Error(`no permission grid form (${gridPage.status})`);
  let adminTicked = false;
  const grid = loop(isStopped, async () => {
    adminTicked = !adminTicked;
    const form = new URLSearchParams({ _csrf: csrf });
    form.append("permissions", `${system.editorialAppId}:signin`);
    if (adminTicked) form.append("permissions", `${system.editorialAppId}:admin`);
    const posted = await admin.send("POST /users/:uid/permissions", gridUrl, { method: "POST", headers: { accept: "text/html" }, form });
    record.gridPosts.push({ value: adminTicked, acknowledged: posted.status === 303 });
  });

  // One writer per learner, sending completion batches one after another; and two readers.
  const api = new HttpClient(tally);
  const authorization = { authorization: `Bearer ${system.completionToken}` };
  const batches = LEARNERS.map((username, learner) => {
    const sent = new Map<string, Attempt<number>[]>();
    record.batches.set(username, sent);
    let n = 0;
    return loop(isStopped, async () => {
      n += 1;
      const block = PROBLEMS[n % PROBLEMS.length] as string;
      const value = ((n + learner) % 5) / 4;
      const answer = await api.send("POST completion-batch", `${system.completion.url}/api/completion/v1/completion-batch`, {
        method: "POST",
        headers: { ...authorization, "content-type": "application/json" },
        body: JSON.stringify({ username, course_key: COURSE_KEY, blocks: { [block]: value } }),
      });
      const attempts = sent.get(block) ?? [];
      attempts.push({ value, acknowledged: answer.status === 200 });
      sent.set(block, attempts);
    });
  });
  const reads = [0, 1].map((reader) =>
    loop(isStopped, async () => {
      const username = LEARNERS[reader] as string;
      await api.send("GET course detail", `${system.completion.url}/api/completion/v1/course/${COURSE_KEY}/?username=${username}`, { headers: authorization });
    }),
  );

  // Browsers starting a sign-in at the editorial app (each writes a session row), and an API caller of it.
  const visitor = new HttpClient(tally);
  const editorial = loop(isStopped, async () => {
    await visitor.send("GET editorial /auth/gds", `${system.editorial.url}/auth/gds`, { headers: { accept: "text/html" } });
    await visitor.send("GET editorial /api/me", `${system.editorial.url}/api/me`, { headers: { authorization: `Bearer ${system.accessToken}` } });
  });

  const all = Promise.all([oauth, ...userJson, grid, ...batches, ...reads, editorial]);
  return {
    record,
    async stop() {
      stopped = true;
      await all;
    },
  };
}

/**
 * The values a write series may have left: with `attempts` sent in order,
 * the last acknowledged value, or any sent after it (a write whose answer was
 * lost may have committed). `undefined` stands for "none written", allowed
 * only when nothing was acknowledged.
 */
export function allowedOutcomes<T>(attempts: readonly Attempt<T>[]): (T | undefined)[] {
  let last = -1;
  attempts.forEach((attempt, index) => {
    if (attempt.acknowledged) last = index;
  });
  const after = attempts.slice(last === -1 ? 0 : last).map((attempt) => attempt.value);
  return last === -1 ? [undefined, ...after] : after;
}
