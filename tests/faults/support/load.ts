import { csrfTokenOf, HttpClient, signIn, type Attempt } from "@tessera/test-support/drill";
import { COURSE_KEY, LEARNERS, PASSWORD, PROBLEMS, REQUEST_TIMEOUT_MS, type FaultSystem } from "./fault-system.js";
import type { Tally } from "./tally.js";

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
  const browser = new HttpClient(tally, REQUEST_TIMEOUT_MS);
  await signIn(browser, system.signon, system.userEmail, PASSWORD);
  const { clientId, clientSecret, redirectUri } = system.oauthClient;
  const authorizePath = `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: "faults", scope: "openid profile email", nonce: "faults" })}`;
  const oauth = loop(isStopped, async () => {
    const authorized = await browser.send("GET /oauth/authorize", system.signon, authorizePath, { headers: { accept: "text/html" } });
    const code = authorized.status === 302 && authorized.location !== null ? new URL(authorized.location).searchParams.get("code") : null;
    if (code === null) return;
    const exchanged = await browser.send("POST /token", system.signon, "/token", {
      method: "POST",
      form: { grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: clientId, client_secret: clientSecret },
    });
    if (exchanged.status !== 200) return;
    const tokens = JSON.parse(exchanged.body) as { access_token: string; id_token?: string };
    record.issuedTokens.push(tokens.access_token);
    if (tokens.id_token === undefined) record.missingIdTokens += 1;
    await browser.send("GET /userinfo", system.signon, "/userinfo", { headers: { authorization: `Bearer ${tokens.access_token}` } });
  });

  // Two callers of /user.json.
  const reader = new HttpClient(tally, REQUEST_TIMEOUT_MS);
  const userJson = [1, 2].map(() =>
    loop(isStopped, async () => {
      await reader.send("GET /user.json", system.signon, "/user.json", { headers: { authorization: `Bearer ${system.accessToken}` } });
    }),
  );

  // An administrator toggling `admin` on the editorial app for one person, through the permission grid.
  const admin = new HttpClient(tally, REQUEST_TIMEOUT_MS);
  await signIn(admin, system.signon, system.adminEmail, PASSWORD);
  const gridPath = `/users/${system.gridUser.uid}/permissions`;
  const gridPage = await admin.send("GET /users/:uid/permissions", system.signon, gridPath, { headers: { accept: "text/html" } });
  const csrf = csrfTokenOf(gridPage.body);
  if (csrf === undefined) throw new Error(`no permission grid form (${gridPage.status})`);
  let adminTicked = false;
  const grid = loop(isStopped, async () => {
    adminTicked = !adminTicked;
    const permissions = [`${system.editorialAppId}:signin`, ...(adminTicked ? [`${system.editorialAppId}:admin`] : [])];
    const posted = await admin.send("POST /users/:uid/permissions", system.signon, gridPath, { method: "POST", headers: { accept: "text/html" }, form: { _csrf: csrf, permissions } });
    record.gridPosts.push({ value: adminTicked, acknowledged: posted.status === 303 });
  });

  // One writer per learner, sending completion batches one after another; and two readers.
  const api = new HttpClient(tally, REQUEST_TIMEOUT_MS);
  const authorization = { authorization: `Bearer ${system.completionToken}` };
  const batches = LEARNERS.map((username, learner) => {
    const sent = new Map<string, Attempt<number>[]>();
    record.batches.set(username, sent);
    let n = 0;
    return loop(isStopped, async () => {
      n += 1;
      const block = PROBLEMS[n % PROBLEMS.length] as string;
      const value = ((n + learner) % 5) / 4;
      const answer = await api.send("POST completion-batch", system.completion, "/api/completion/v1/completion-batch", {
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
      await api.send("GET course detail", system.completion, `/api/completion/v1/course/${COURSE_KEY}/?username=${username}`, { headers: authorization });
    }),
  );

  // Browsers starting a sign-in at the editorial app (each writes a session row), and an API caller of it.
  const visitor = new HttpClient(tally, REQUEST_TIMEOUT_MS);
  const editorial = loop(isStopped, async () => {
    await visitor.send("GET editorial /auth/gds", system.editorial, "/auth/gds", { headers: { accept: "text/html" } });
    await visitor.send("GET editorial /api/me", system.editorial, "/api/me", { headers: { authorization: `Bearer ${system.accessToken}` } });
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
