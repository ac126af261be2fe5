import type { LightMyRequestResponse } from "fastify";
import { describe, expect, it } from "vitest";
import { issueOperatorToken } from "../../src/oauth/issue-operator-token.js";
import { listPushes } from "../../src/repositories/push-deliveries.js";
import type { InjectBrowser } from "../support/browser.js";
import { createApp, createUser } from "../support/factories.js";
import { exchangeCode, obtainCode } from "../support/flow.js";
import { buildTestSignon, testConfig, useTestSignon, type TestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { signedInAs } from "./users-support.js";

// Which applications hear of a suspension (README row 23): the confirmation page, the event log and the pushes
// count them by one rule and say it in one wording.

const { database, signon } = await useTestSignon();

/** The event log's rows: time, event, by, application, IP address, browser. */
function eventRows(response: LightMyRequestResponse): string[][] {
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(response.body)?.[1] ?? "";
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] as string).matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) => textOf({ body: cell[1] as string } as LightMyRequestResponse).trim()),
  );
}

/**
 * A person whom Mainstream signed in (a code exchanged), Whitehall issued a token in advance, Collections sent
 * through a sign-in they never finished (a code issued, never exchanged), and who holds signin on Finance too.
 */
async function personOfFourApplications(system: TestSignon) {
  const { ctx, app } = system;
  const names = ["Mainstream", "Whitehall", "Collections", "Finance"];
  const clients = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await createApp(ctx, { name })] as const)));
  const person = await createUser(ctx, { name: "Sue Pended", email: "sue@example.org", permissions: Object.fromEntries(names.map((name) => [name, ["signin"]])) });
  const { code } = await obtainCode(app, clients.Mainstream!, person.email);
  expect((await exchangeCode(app, clients.Mainstream!, code)).statusCode).toBe(200);
  await issueOperatorToken(ctx, { email: person.email, application: "Whitehall" });
  await obtainCode(app, clients.Collections!, person.email);
  return person;
}

/** Suspends the person through the confirmation page; returns what the page said would happen. */
async function suspendThroughPage(browser: InjectBrowser, uid: string): Promise<string> {
  const action = `/users/${uid}/suspend`;
  const page = textOf(await browser.get(action));
  const suspended = await browser.submit(action, action, { confirm: "yes", reason: "Left the team" });
  expect(suspended.statusCode).toBe(303);
  return page;
}

async function reauthPushesTo(system: TestSignon, email: string): Promise<string[]> {
  return (await listPushes(system.ctx.db, {}))
    .filter((push) => push.email === email && push.kind === "reauth")
    .map((push) => push.application)
    .sort();
}

describe("the applications told of a suspension", () => {
  it("are those that issued the person a token (an exchanged code or an API token, not a code never exchanged), on the page, in the event log and in the pushes", async () => {
    const person = await personOfFourApplications(signon);
    const { browser } = await signedInAs(signon.app, signon.ctx, "admin");

    // The event log says a sign-in only where the code was exchanged.
    const before = eventRows(await browser.get(`/users/${person.uid}/events`)).map((row) => [row[1], row[3]]);
    expect(before).toEqual(
      expect.arrayContaining([
        ["Sign-in code issued for an application", "Collections"],
        ["Sign-in code issued for an application", "Mainstream"],
        ["Signed in to an application: it issued them a token", "Mainstream"],
      ]),
    );
    expect(before).not.toContainEqual(["Signed in to an application: it issued them a token", "Collections"]);

    const page = await suspendThroughPage(browser, person.uid);
    expect(page).toContain("The applications that issued them a token are told to sign them out: Mainstream, Whitehall.");
    expect(page).not.toContain("signed in to");

    const [suspension] = eventRows(await browser.get(`/users/${person.uid}/events`));
    expect(suspension?.[1]).toBe("Suspended (reason: Left the team); the applications that issued them a token were told to sign them out: Mainstream, Whitehall");
    expect(await reauthPushesTo(signon, person.email)).toEqual(["Mainstream", "Whitehall"]);
  });

  it("with SIGNON_PUSH_FAN_OUT=token-or-permission, are also those where they hold a permission, and the page and event log say so", async () => {
    const wide = await buildTestSignon(database, testConfig({ SIGNON_PUSH_FAN_OUT: "token-or-permission" }));
    try {
      const person = await personOfFourApplications(wide);
      const { browser } = await signedInAs(wide.app, wide.ctx, "admin");
      const page = await suspendThroughPage(browser, person.uid);
      expect(page).toContain(
        "The applications that issued them a token or where they hold a permission are told to sign them out: Collections, Finance, Mainstream, Whitehall.",
      );
      const [suspension] = eventRows(await browser.get(`/users/${person.uid}/events`));
      expect(suspension?.[1]).toBe(
        "Suspended (reason: Left the team); the applications that issued them a token or where they hold a permission were told to sign them out: Collections, Finance, Mainstream, Whitehall",
      );
      expect(await reauthPushesTo(wide, person.email)).toEqual(["Collections", "Finance", "Mainstream", "Whitehall"]);
    } finally {
      await wide.app.close();
    }
  });

  it("are none when no application issued them a token, and the page and event log say that none is told", async () => {
    await createApp(signon.ctx, { name: "Collections" });
    const person = await createUser(signon.ctx, { name: "Sue Pended", email: "sue@example.org", permissions: { Collections: ["signin"] } });
    const { browser } = await signedInAs(signon.app, signon.ctx, "admin");
    expect(await suspendThroughPage(browser, person.uid)).toContain("No application issued them a token, so none is told to sign them out.");
    const [suspension] = eventRows(await browser.get(`/users/${person.uid}/events`));
    expect(suspension?.[1]).toBe("Suspended (reason: Left the team); no application issued them a token, so none was told to sign them out");
    expect(await reauthPushesTo(signon, person.email)).toEqual([]);
  });
});
