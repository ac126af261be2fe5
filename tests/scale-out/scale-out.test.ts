// Scale-out (issue #7, ARCHITECTURE "Growing past one machine"): two Sign-on
// and two Completion processes on one PostgreSQL database share every piece
// of state through it. Needs DATABASE_URL (CI: postgres://postgres@127.0.0.1:5432/test);
// it creates a database of its own on that server and drops it afterwards.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Browser } from "./support/browser.js";
import { createFreshDatabase, type FreshDatabase } from "./support/fresh-database.js";
import { blockKey, expectedAggregates, leaves, learningTree, type TreeBlock } from "./support/learning-tree.js";
import { postForm } from "./support/form-post.js";
import { queueUpdatePushes } from "./support/push-outbox.js";
import { freePort, runShipped, signonCli, startShipped, type ServiceProcess } from "@tessera/test-support";
import { CountingReceiver } from "@tessera/test-support/drill";

const serverUrl = process.env["DATABASE_URL"];
const skipReason = "skipped: DATABASE_URL is not set (CI runs it against PostgreSQL on 127.0.0.1:5432)";
if (!serverUrl) console.warn(`scale-out test ${skipReason}`);

/** What every instance of a service shares, as behind one load balancer. */
const sharedPublicUrl = "http://signon.localhost:8080";
const password = "scale out correct horse battery";
/** Argon2 at its lowest: these tests sign in, they do not measure hashing. */
const fastHashing = { SIGNON_ARGON2_MEMORY_KIB: "64", SIGNON_ARGON2_TIME_COST: "1" };

describe.skipIf(!serverUrl)(`two Sign-on and two Completion instances on one PostgreSQL database${serverUrl ? "" : ` (${skipReason})`}`, () => {
  let database: FreshDatabase;
  let pool: pg.Pool;
  let cliEnv: Record<string, string>;
  const receiver = new CountingReceiver();
  const services: ServiceProcess[] = [];
  let signonA: ServiceProcess;
  let signonB: ServiceProcess;
  let completionA: ServiceProcess;
  let completionB: ServiceProcess;
  let completionClientId = "";

  beforeAll(async () => {
    database = await createFreshDatabase(serverUrl as string);
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    cliEnv = { NODE_ENV: "development", DATABASE_URL: database.url, ...fastHashing };
    await receiver.start();
    const [portA, portB, portC, portD] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const signonEnv = () => ({
      ...cliEnv,
      SIGNON_PUBLIC_URL: sharedPublicUrl,
      SIGNON_PUSH_POLL_MS: "50",
      SIGNON_PUSH_CONCURRENCY: "16",
    });
    const signon = (name: string, port: number) => startShipped("signon", { name, port, env: signonEnv(), readyPath: "/.well-known/oauth-authorization-server" });
    const completion = (name: string, port: number, signonPort: number) =>
      startShipped("completion", {
        name,
        port,
        env: { DATABASE_URL: database.url, SIGNON_URL: `http://127.0.0.1:${signonPort}`, COMPLETION_SIGNON_CLIENT_ID: completionClientId, LOG_LEVEL: "warn" },
        readyPath: "/api/completion/v1/openapi.json",
      });
    // Both Sign-on instances and the command that registers Completion start at once on an empty database: their
    // migrations take turns under the advisory lock. Then both Completion instances, which check tokens as that
    // application, start at once too.
    const [signonAStart, signonBStart, registered] = await Promise.allSettled([
      signon("signon-a", portA as number),
      signon("signon-b", portB as number),
      signonCli(cliEnv, "apps", "create", "--name", "completion", "--redirect-uri", `${receiver.url}/completion/auth/gds/callback`, "--permissions", "staff,admin"),
    ]);
    for (const result of [signonAStart, signonBStart]) if (result.status === "fulfilled") services.push(result.value);
    const failedFirst = [signonAStart, signonBStart, registered].find((result) => result.status === "rejected");
    if (failedFirst) throw failedFirst.reason;
    completionClientId = String((registered as PromiseFulfilledResult<Record<string, unknown>>).value["client_id"]);
    const completions = await Promise.allSettled([
      completion("completion-a", portC as number, portA as number),
      completion("completion-b", portD as number, portB as number),
    ]);
    for (const result of completions) if (result.status === "fulfilled") services.push(result.value);
    const failed = completions.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    [signonA, signonB, completionA, completionB] = services as [ServiceProcess, ServiceProcess, ServiceProcess, ServiceProcess];
  });

  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await receiver.stop();
    await pool?.end();
    await database?.drop();
  });

  it("runs the OAuth flow across both Sign-on instances: sessions, codes and tokens of one work at the other", async () => {
    const redirectUri = `${receiver.url}/editorial/auth/gds/callback`;
    const client = await signonCli(cliEnv, "apps", "create", "--name", "Scale editorial", "--redirect-uri", redirectUri, "--push-base", `${receiver.url}/editorial`, "--permissions", "admin");
    const clientId = String(client["client_id"]);
    const clientSecret = String(client["client_secret"]);
    const user = await signonCli(cliEnv, "users", "create", "--email", "ada@example.org", "--name", "Ada", "--password", password);
    await signonCli(cliEnv, "permissions", "grant", "--email", "ada@example.org", "--app", "Scale editorial", "--permissions", "signin,admin");
    const authorize = (instance: ServiceProcess, state: string) =>
      `${instance.url}/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state })}`;
    const token = (instance: ServiceProcess, fields: Record<string, string>) =>
      postForm(`${instance.url}/token`, { ...fields, client_id: clientId, client_secret: clientSecret });
    const userJson = (instance: ServiceProcess, accessToken: string) => fetch(`${instance.url}/user.json`, { headers: { authorization: `Bearer ${accessToken}` } });
    const expectedUser = {
      uid: user["uid"],
      name: "Ada",
      email: "ada@example.org",
      permissions: ["admin", "signin"],
      organisation_slug: null,
      organisation_content_id: null,
      disabled: false,
    };

    // The sign-in form shown by A posted to B (which starts the session), the code issued by A and redeemed at B, the token good at both.
    const browser = new Browser();
    const first = await browser.authorize(authorize(signonA, "one"), "ada@example.org", password, signonB.url);
    expect(`${first.origin}${first.pathname}`).toBe(redirectUri);
    expect(first.searchParams.get("state")).toBe("one");
    expect(first.searchParams.get("iss")).toBe(sharedPublicUrl);
    const firstCode = first.searchParams.get("code") as string;
    const firstTokens = await token(signonB, { grant_type: "authorization_code", code: firstCode, redirect_uri: redirectUri });
    expect(firstTokens.status).toBe(200);
    const firstAccess = (JSON.parse(firstTokens.body) as { access_token: string }).access_token;
    for (const instance of [signonA, signonB]) {
      const response = await userJson(instance, firstAccess);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ user: expectedUser });
    }

    // The session B started (and A honoured above) signs the browser in at B without a second sign-in; B's code redeemed at A, refreshed at B, checked at A.
    const second = await browser.authorize(authorize(signonB, "two"), "ada@example.org", password);
    expect(browser.signIns).toBe(1);
    expect(second.searchParams.get("state")).toBe("two");
    const secondTokens = await token(signonA, { grant_type: "authorization_code", code: second.searchParams.get("code") as string, redirect_uri: redirectUri });
    expect(secondTokens.status).toBe(200);
    const refreshToken = (JSON.parse(secondTokens.body) as { refresh_token: string }).refresh_token;
    const refreshed = await token(signonB, { grant_type: "refresh_token", refresh_token: refreshToken });
    expect(refreshed.status).toBe(200);
    const refreshedAccess = (JSON.parse(refreshed.body) as { access_token: string }).access_token;
    expect((await userJson(signonA, refreshedAccess)).status).toBe(200);
    // The old refresh token died at B, so A refuses it too (S10).
    expect((await token(signonA, { grant_type: "refresh_token", refresh_token: refreshToken })).status).toBe(400);

    // A code is single use across instances: replayed at A it fails and revokes what B issued from it (S6).
    const replay = await token(signonA, { grant_type: "authorization_code", code: firstCode, redirect_uri: redirectUri });
    expect(replay.status).toBe(400);
    expect(JSON.parse(replay.body)).toMatchObject({ error: "invalid_grant" });
    // A, which revoked them, refuses them at once; B as soon as the database's notification of the change reaches it.
    expect((await userJson(signonA, firstAccess)).status).toBe(401);
    await vi.waitFor(async () => expect((await userJson(signonB, firstAccess)).status).toBe(401), { timeout: 5_000 });
  });

  it("holds the brute-force limit of S15 on /token for attempts alternating between both instances", async () => {
    const limit = 10;
    const wrong = (clientId: string, n: number) => ({ grant_type: "authorization_code", code: "nope", redirect_uri: "https://x.example/cb", client_id: clientId, client_secret: `wrong-${n}` });
    const app = async (name: string) => String((await signonCli(cliEnv, "apps", "create", "--name", name, "--redirect-uri", "https://brute.example/cb"))["client_id"]);

    // One after another, alternating: exactly the limit is answered 401, then 429 at both.
    const steady = await app("Scale brute force one by one");
    const statuses: number[] = [];
    for (let n = 0; n < 2 * limit + 4; n++) {
      const response = await postForm(`${(n % 2 === 0 ? signonA : signonB).url}/token`, wrong(steady, n), { localAddress: "127.0.0.2" });
      statuses.push(response.status);
      if (response.status === 429) expect(Number(response.headers["retry-after"])).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([...Array<number>(limit).fill(401), ...Array<number>(limit + 4).fill(429)]);
  });

  // Simultaneous attempts all pass the first check before any failure is counted; the limit holds
  // because each failure is judged again on the total its own atomic count returns.
  it("holds the brute-force limit of S15 on /token for simultaneous attempts at both instances", async () => {
    const limit = 10;
    const wrong = (clientId: string, n: number) => ({ grant_type: "authorization_code", code: "nope", redirect_uri: "https://x.example/cb", client_id: clientId, client_secret: `wrong-${n}` });
    const app = async (name: string) => String((await signonCli(cliEnv, "apps", "create", "--name", name, "--redirect-uri", "https://brute.example/cb"))["client_id"]);

    // All at once, half to each instance: never more failures accepted than the limit.
    const burst = await app("Scale brute force burst");
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, n) => postForm(`${(n % 2 === 0 ? signonA : signonB).url}/token`, wrong(burst, n), { localAddress: "127.0.0.3" })),
    );
    const unauthorized = responses.filter((response) => response.status === 401).length;
    const limited = responses.filter((response) => response.status === 429).length;
    expect(unauthorized + limited).toBe(40);
    expect(unauthorized).toBeLessThanOrEqual(limit);
    expect(limited).toBeGreaterThanOrEqual(40 - limit);
  });

  it("delivers 1,000 queued pushes exactly once with both instances' workers running", async () => {
    const applicationCount = 10;
    const userCount = 100;
    const applications: { id: string; prefix: string }[] = [];
    for (let n = 0; n < applicationCount; n++) {
      const prefix = `/push-${n}`;
      await signonCli(cliEnv, "apps", "create", "--name", `Push ${n}`, "--redirect-uri", `${receiver.url}${prefix}/auth/gds/callback`, "--push-base", `${receiver.url}${prefix}`);
      const { rows } = await pool.query<{ id: string }>("select id from signon.applications where name = $1", [`Push ${n}`]);
      applications.push({ id: (rows[0] as { id: string }).id, prefix });
    }
    const uids = await queueUpdatePushes(cliEnv, { users: userCount, applicationIds: applications.map((application) => application.id) });
    const expected = applications.flatMap((application) => uids.map((uid) => `PUT ${application.prefix}/users/${uid}`)).sort();
    expect(expected).toHaveLength(1000);

    const pushReceipts = () => receiver.receipts.filter((receipt) => receipt.path.startsWith("/push-"));
    const undelivered = async () =>
      Number(
        (
          await pool.query<{ n: string }>("select count(*) as n from signon.push_deliveries where application_id = any($1::uuid[]) and status <> 'delivered'", [
            applications.map((application) => application.id),
          ])
        ).rows[0]?.n,
      );
    const deadline = Date.now() + 90_000;
    while (pushReceipts().length < expected.length || (await undelivered()) > 0) {
      if (Date.now() > deadline) throw new Error(`only ${pushReceipts().length} of ${expected.length} pushes arrived`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Several poll rounds of both workers more, so a second sending would show.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const arrived = pushReceipts().map((receipt) => `${receipt.method} ${receipt.path}`);
    expect(arrived).toHaveLength(expected.length);
    expect([...arrived].sort()).toEqual(expected);
    // Each worker holds its own push token per application: two tokens at one application means both delivered.
    const tokensPerApplication = applications.map((application) => new Set(receiver.under(`${application.prefix}/`).map((receipt) => receipt.authorization)).size);
    expect(Math.max(...tokensPerApplication)).toBe(2);
  });

  it("keeps a learner's aggregates equal to a from-scratch recomputation under concurrent ingestion through both Completion instances", async () => {
    await signonCli(cliEnv, "api-users", "create", "--email", "loader@example.org", "--name", "Loader");
    await signonCli(cliEnv, "permissions", "grant", "--email", "loader@example.org", "--app", "completion", "--permissions", "signin,staff,admin");
    const staffToken = String((await signonCli(cliEnv, "tokens", "issue", "--email", "loader@example.org", "--app", "completion"))["access_token"]);
    const courseKey = "course-v1:ScaleX+Out+2026";
    const username = "scale-learner";
    const tree = learningTree();
    const call = (instance: ServiceProcess, method: string, path: string, body?: unknown) =>
      fetch(`${instance.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${staffToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    const imported = await call(completionA, "PUT", "/api/completion/v1/admin/import", {
      courses: [{ course_key: courseKey, structure: tree }],
      users: [{ id: 1, username, email: "learner@example.org" }],
      enrollments: [{ username, course_key: courseKey }],
    });
    expect(imported.status, await imported.clone().text()).toBe(200);

    // 48 problems; 40 batches of 6, values in quarters (exact in binary), all in flight at once, alternating instances.
    const problems = leaves(tree);
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const batches = Array.from({ length: 40 }, () => {
      const blocks: Record<string, number> = {};
      for (let k = 0; k < 6; k++) blocks[blockKey(courseKey, problems[Math.floor(random() * problems.length)] as TreeBlock)] = Math.floor(random() * 5) / 4;
      return blocks;
    });
    const answers = await Promise.all(
      batches.map((blocks, n) => call(n % 2 === 0 ? completionA : completionB, "POST", "/api/completion/v1/completion-batch", { username, course_key: courseKey, blocks })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(batches.map(() => 200));

    // From scratch, here: sums over the stored completions in the tree.
    const stored = await pool.query<{ block_key: string; completion: number }>(
      "select c.block_key, c.completion from completion.block_completions c join completion.learners l on l.id = c.learner_id where l.username = $1 and c.course_key = $2",
      [username, courseKey],
    );
    const values = new Map(stored.rows.map((row) => [row.block_key, row.completion]));
    for (const [key, value] of values) expect(batches.some((blocks) => blocks[key] === value)).toBe(true);
    // Every container has a completion under it (the seed sees to it), so incremental writes have touched every aggregate row.
    const verticals = tree.children?.flatMap((chapter) => chapter.children?.flatMap((sequential) => sequential.children ?? []) ?? []) ?? [];
    expect(verticals.filter((vertical) => !leaves(vertical).some((problem) => values.has(blockKey(courseKey, problem))))).toEqual([]);
    const expected = expectedAggregates(courseKey, tree, values);
    const readAggregates = async () =>
      (
        await pool.query<{ block_key: string; aggregation_name: string; earned: number; possible: number; percent: number }>(
          "select block_key, aggregation_name, earned, possible, percent from completion.aggregates where learner_id = 1 and course_key = $1 order by block_key",
          [courseKey],
        )
      ).rows;
    const aggregates = await readAggregates();
    expect(aggregates).toEqual(expected);
    const course = expected.find((row) => row.aggregation_name === "course");
    const enrollment = await pool.query("select course_earned, course_possible, course_percent from completion.enrollments where learner_id = 1 and course_key = $1", [courseKey]);
    expect(enrollment.rows).toEqual([{ course_earned: course?.earned, course_possible: course?.possible, course_percent: course?.percent }]);

    // Both instances read the same figures.
    for (const instance of [completionA, completionB]) {
      const read = await call(instance, "GET", `/api/completion/v1/course/${courseKey}/?username=${username}`);
      expect(read.status).toBe(200);
      const page = (await read.json()) as { results: { completion: Record<string, number> }[] };
      expect(page.results[0]?.completion).toEqual({ earned: course?.earned, possible: course?.possible, percent: course?.percent, ratio: course?.percent });
    }

    // And the product's own from-scratch recomputation (`completion reaggregate`, a real process) changes nothing.
    const reaggregated = await runShipped("completion-cli", ["reaggregate", courseKey], { DATABASE_URL: database.url });
    expect(reaggregated.code, reaggregated.output).toBe(0);
    expect(await readAggregates()).toEqual(aggregates);
  });
});
