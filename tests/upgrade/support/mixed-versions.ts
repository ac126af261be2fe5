// While one instance of a service runs the new release and the other the previous one: what one issues works at
// the other, asked of each instance directly (not through nginx), in both directions. Each check returns its
// problems (empty when all is well).
import { csrfTokenOf, HttpClient, signIn, type RequestLog } from "@tessera/test-support/drill";
import type { Instance, UpgradeSystem } from "./system.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function oauthError(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: string }).error;
  } catch {
    return undefined;
  }
}

/**
 * Sign-on, from `from` to `to`: a browser signed in at `from`, its session and the CSRF token of a page `from`
 * served, post a permission change at `to`; a code `from` issued is exchanged at `to`; the access token works at
 * both; the refresh token rotates at `from`, then at `to`; a code `to` issued is refused at `from` once `to` used it.
 */
export async function signonAcross(system: UpgradeSystem, from: Instance, to: Instance, log: RequestLog): Promise<string[]> {
  const problems: string[] = [];
  const label = `${from.name} (${from.release.version}) → ${to.name} (${to.release.version})`;
  const admin = new HttpClient(log);
  await signIn(admin, from.process, system.adminEmail);
  // A person the load leaves alone: the post grants them signin at the editorial app (and nothing anywhere else).
  const uid = system.mixedUserUid;
  const page = await admin.send("mixed GET /users/:uid/permissions", from.process, `/users/${uid}/permissions`, { headers: { accept: "text/html" } });
  const csrf = csrfTokenOf(page.body);
  if (page.status !== 200 || csrf === undefined) return [`${label}: the permissions page answered ${page.status} at ${from.name}`];
  const other = await admin.send("mixed GET /users/:uid/permissions", to.process, `/users/${uid}/permissions`, { headers: { accept: "text/html" } });
  if (other.status !== 200) problems.push(`${label}: the session signed in at ${from.name} answered ${other.status} at ${to.name}`);
  const posted = await admin.send("mixed POST /users/:uid/permissions", to.process, `/users/${uid}/permissions`, {
    method: "POST",
    headers: { accept: "text/html" },
    form: { _csrf: csrf, permissions: [`${system.editorialAppId}:signin`] },
  });
  if (posted.status !== 303) problems.push(`${label}: a form post with ${from.name}'s CSRF token answered ${posted.status} at ${to.name}: ${posted.body.slice(0, 200)}`);

  const { clientId, clientSecret, redirectUri } = system.oauthClient;
  const client = { client_id: clientId, client_secret: clientSecret };
  const browser = new HttpClient(log);
  await signIn(browser, from.process, system.userEmail);
  const authorize = `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: "mixed" })}`;
  const authorized = await browser.send("mixed GET /oauth/authorize", to.process, authorize, { headers: { accept: "text/html" } });
  if (authorized.status !== 302 || authorized.location === null) return [...problems, `${label}: authorize with ${from.name}'s session answered ${authorized.status} at ${to.name}`];
  const code = new URL(authorized.location).searchParams.get("code") ?? "";
  const exchanged = await browser.send("mixed POST /token (code)", from.process, "/token", {
    method: "POST",
    form: { grant_type: "authorization_code", code, redirect_uri: redirectUri, ...client },
  });
  if (exchanged.status !== 200) return [...problems, `${label}: ${to.name}'s code answered ${exchanged.status} at ${from.name}: ${exchanged.body.slice(0, 200)}`];
  let tokens = JSON.parse(exchanged.body) as { access_token: string; refresh_token: string };
  const replayed = await browser.send("mixed POST /token (used code)", to.process, "/token", {
    method: "POST",
    form: { grant_type: "authorization_code", code, redirect_uri: redirectUri, ...client },
  });
  if (replayed.status !== 400 || oauthError(replayed.body) !== "invalid_grant") problems.push(`${label}: a code used at ${from.name} answered ${replayed.status} at ${to.name}`);
  // The replay revoked the grant (as it should): a new code for the token checks, issued by `from`, exchanged at `to`.
  const again = await browser.send("mixed GET /oauth/authorize", from.process, authorize, { headers: { accept: "text/html" } });
  const secondCode = again.location === null ? "" : (new URL(again.location).searchParams.get("code") ?? "");
  const second = await browser.send("mixed POST /token (code)", to.process, "/token", {
    method: "POST",
    form: { grant_type: "authorization_code", code: secondCode, redirect_uri: redirectUri, ...client },
  });
  if (second.status !== 200) return [...problems, `${label}: ${from.name}'s code answered ${second.status} at ${to.name}: ${second.body.slice(0, 200)}`];
  tokens = JSON.parse(second.body) as { access_token: string; refresh_token: string };
  for (const instance of [from, to]) {
    const read = await browser.send("mixed GET /user.json", instance.process, "/user.json", { headers: { authorization: `Bearer ${tokens.access_token}` } });
    if (read.status !== 200) problems.push(`${label}: an access token from ${to.name} answered ${read.status} at ${instance.name}`);
  }
  for (const instance of [from, to, from]) {
    const rotated = await browser.send("mixed POST /token (refresh)", instance.process, "/token", {
      method: "POST",
      form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, ...client },
    });
    if (rotated.status !== 200) {
      problems.push(`${label}: a refresh token answered ${rotated.status} at ${instance.name}: ${rotated.body.slice(0, 200)}`);
      break;
    }
    tokens = JSON.parse(rotated.body) as { access_token: string; refresh_token: string };
    const read = await browser.send("mixed GET /user.json", (instance === from ? to : from).process, "/user.json", { headers: { authorization: `Bearer ${tokens.access_token}` } });
    if (read.status !== 200) problems.push(`${label}: an access token from a rotation at ${instance.name} answered ${read.status} at the other instance`);
  }
  return problems;
}

/** Completion: a batch written at `from` is read back the same at `to` (and at `from`), for a learner the load does not write. */
export async function completionAcross(
  system: UpgradeSystem,
  from: Instance,
  to: Instance,
  course: { key: string; learner: string; problems: readonly string[] },
  value: number,
  log: RequestLog,
): Promise<string[]> {
  const label = `${from.name} (${from.release.version}) → ${to.name} (${to.release.version})`;
  const api = new HttpClient(log);
  const authorization = `Bearer ${system.completionTokens.writer}`;
  const blocks = Object.fromEntries(course.problems.map((block) => [block, value]));
  const written = await api.send("mixed POST completion-batch", from.process, "/api/completion/v1/completion-batch", {
    method: "POST",
    headers: { authorization, "content-type": "application/json" },
    body: JSON.stringify({ username: course.learner, course_key: course.key, blocks }),
  });
  if (written.status !== 200) return [`${label}: the batch answered ${written.status} at ${from.name}: ${written.body.slice(0, 200)}`];
  const expected = value * course.problems.length;
  const problems: string[] = [];
  for (const instance of [to, from]) {
    let last = "";
    const deadline = Date.now() + 20_000;
    for (;;) {
      const read = await api.send("mixed GET course detail", instance.process, `/api/completion/v1/course/${course.key}/?requested_fields=username`, { headers: { authorization } });
      last = `${read.status} ${read.body.slice(0, 300)}`;
      if (read.status === 200) {
        const item = (JSON.parse(read.body) as { results: { username?: string; completion: { earned: number; possible: number | null } }[] }).results.find(
          (result) => result.username === course.learner,
        );
        if (item !== undefined && Math.abs(item.completion.earned - expected) < 1e-6 && item.completion.possible === course.problems.length) break;
      }
      if (Date.now() > deadline) {
        problems.push(`${label}: ${instance.name} reads ${last}, expected earned ${expected} of ${course.problems.length}`);
        break;
      }
      await sleep(200);
    }
  }
  return problems;
}
