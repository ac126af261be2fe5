import { signonMigrations } from "@tessera/signon";
import { signonClientMigrations } from "@tessera/signon-client/postgres";
import { useTestDatabase } from "@tessera/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, registerEditorialApp, startShippedEditorialApp } from "./support/editorial-app.js";
import { HttpBrowser } from "./support/http-browser.js";
import { eventually, startPushingSignon, type PushingSignon } from "./support/pushing-signon.js";
import { signInForm } from "./support/real-signon.js";

// End to end on real ports: Sign-on's push worker calls the editorial
// application's receivers (PUT /users/{uid}, POST /users/{uid}/reauth) with
// its push credential, which the receivers check against Sign-on's /user.json.
const database = await useTestDatabase({
  migrations: [signonMigrations, signonClientMigrations],
  label: "editorial_push_e2e",
});

const password = "correct horse battery staple";
let signon: PushingSignon;
let app: { close(): Promise<void> } | undefined;
let appUrl: string;

beforeAll(async () => {
  const [signonPort, appPort] = [await freePort(), await freePort()];
  signon = await startPushingSignon(database.url, signonPort, database.kind === "embedded");
  const registration = await registerEditorialApp(signon, appPort);
  await Promise.all([
    signon.cli("users", "create", "--email", "ed@example.org", "--name", "Ed Itor", "--password", password),
    signon.cli("users", "create", "--email", "sue@example.org", "--name", "Sue Spended", "--password", password),
  ]);
  await Promise.all([
    signon.cli("permissions", "grant", "--email", "ed@example.org", "--app", "Editorial", "--permissions", "signin"),
    signon.cli("permissions", "grant", "--email", "sue@example.org", "--app", "Editorial", "--permissions", "signin"),
  ]);
  const started = await startShippedEditorialApp(registration, database.url, appPort);
  app = started;
  appUrl = started.url;
}, 180_000);

afterAll(async () => {
  await signon?.close();
  await app?.close();
  await database.close();
});

async function signIn(browser: HttpBrowser, email: string) {
  const signInPage = await browser.get(`${appUrl}/`);
  const form = signInForm(signInPage.body);
  return browser.postForm(`${signon.url}/sign-in`, { _csrf: form.csrf, return_to: form.returnTo, email, password });
}

async function storedUser(email: string) {
  const result = await database.pool.query<{ permissions: string[]; disabled: boolean; remotely_signed_out: boolean }>(
    "select permissions, disabled, remotely_signed_out from signon_client.users where email = $1",
    [email],
  );
  return result.rows[0];
}

async function pushesOf(email: string) {
  const listed = (await signon.cli("pushes", "list")) as { pushes: { email: string; kind: string; status: string; attempts: number; last_error: string | null }[] };
  return listed.pushes.filter((push) => push.email === email).map(({ kind, status, last_error }) => ({ kind, status, last_error }));
}

// Each step runs Sign-on's command line in a process of its own: seconds each on a busy machine.
describe("pushes from the real Sign-on to the editorial application", { timeout: 90_000 }, () => {
  it("a permission granted in Sign-on reaches the application's stored permissions", async () => {
    const home = await signIn(new HttpBrowser(), "ed@example.org");
    expect(home.url).toBe(`${appUrl}/`);
    expect((await storedUser("ed@example.org"))?.permissions).toEqual(["signin"]);

    await signon.cli("permissions", "grant", "--email", "ed@example.org", "--app", "Editorial", "--permissions", "admin");

    await eventually(async () => (await storedUser("ed@example.org"))?.permissions.join(",") === "admin,signin");
    await eventually(async () => (await pushesOf("ed@example.org")).every((push) => push.status === "delivered"));
    expect(await pushesOf("ed@example.org")).toEqual([{ kind: "update", status: "delivered", last_error: null }]);
  });

  it("suspending the user ends their session there; the next request goes back to Sign-on", async () => {
    const browser = new HttpBrowser();
    const home = await signIn(browser, "sue@example.org");
    expect(home.url).toBe(`${appUrl}/`);

    await signon.cli("users", "suspend", "--email", "sue@example.org", "--reason", "Left the team");

    await eventually(async () => (await storedUser("sue@example.org"))?.remotely_signed_out === true);
    const next = await browser.get(`${appUrl}/`);
    expect(new URL(next.url).origin).toBe(signon.url);
    expect(await storedUser("sue@example.org")).toEqual({ permissions: [], disabled: true, remotely_signed_out: true });
    expect((await pushesOf("sue@example.org")).sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: "reauth", status: "delivered", last_error: null },
      { kind: "update", status: "delivered", last_error: null },
    ]);
  });
});
