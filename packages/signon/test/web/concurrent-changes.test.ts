// Administrators changing people's permissions and suspending and unsuspending them while those people sign in,
// all at once: every answer is what the form or the page gives (never a 5xx), and afterwards each person holds
// the permissions of the last grid saved for them and is suspended or not as the last action said. A
// transaction that PostgreSQL ends with a deadlock is run again by @tessera/db; how many were is printed.
import type { LightMyRequestResponse } from "fastify";
import { describe, expect, it } from "vitest";
import { findUserByUid } from "../../src/repositories/users.js";
import { listPermissionsOfUser } from "../../src/repositories/user-form-choices.js";
import { InjectBrowser, parseSignInForm } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

const ROUNDS = 8;
const PEOPLE = 6;

interface Answer {
  name: string;
  status: number;
}

describe("permission changes, suspensions and sign-ins at once", () => {
  it(`answer ${ROUNDS} rounds without a 5xx and leave each person as the last change said`, async () => {
    const alpha = (await createApp(ctx, { name: "Alpha", permissions: ["editor", "admin"] })).application;
    const zulu = (await createApp(ctx, { name: "Zulu", permissions: ["editor"] })).application;
    const people = [];
    for (let n = 0; n < PEOPLE; n += 1) people.push(await createUser(ctx, { permissions: { Alpha: ["signin"], Zulu: ["signin"] } }));
    const granting = await signedInAs(app, ctx, "superadmin");
    const suspending = await signedInAs(app, ctx, "superadmin");

    /** The grid each person was last saved with, and whether they were last suspended. */
    const lastGrid = new Map<string, string[]>();
    const suspended = new Map<string, boolean>();
    const answers: Answer[] = [];
    const note = (name: string) => (response: LightMyRequestResponse | { statusCode: number }) => {
      answers.push({ name, status: response.statusCode });
      return response.statusCode;
    };

    const signIn = async (email: string): Promise<number> => {
      const browser = new InjectBrowser(app);
      const form = parseSignInForm((await browser.get("/sign-in")).body);
      return note(`sign-in of ${email}`)(await browser.postForm("/sign-in", { _csrf: form.csrfToken, return_to: "/", email, password: defaultPassword }));
    };

    for (let round = 1; round <= ROUNDS; round += 1) {
      const work: Promise<unknown>[] = [];
      for (const [index, person] of people.entries()) {
        // Each person's grid alternates; every application's rows and pushes of the person change each round.
        const grid = (round + index) % 2 === 0 ? [`${alpha.id}:signin`, `${alpha.id}:editor`, `${zulu.id}:signin`] : [`${alpha.id}:signin`, `${alpha.id}:admin`, `${zulu.id}:signin`, `${zulu.id}:editor`];
        const page = `/users/${person.uid}/permissions`;
        work.push(
          submitMany(app, granting.browser, page, page, { permissions: grid }).then((response) => {
            if (note(`grid of ${person.email}`)(response) === 303) lastGrid.set(person.uid, grid);
          }),
        );
        // Half the people are suspended or unsuspended each round, the same people as the grids change.
        if ((round + index) % 2 === 1) {
          const action = suspended.get(person.uid) === true ? "unsuspend" : "suspend";
          const fields: Record<string, string> = action === "suspend" ? { confirm: "yes", reason: `Round ${round}` } : {};
          work.push(
            suspending.browser.submit(`/users/${person.uid}`, `/users/${person.uid}/${action}`, fields).then((response) => {
              if (note(`${action} of ${person.email}`)(response) === 303) suspended.set(person.uid, action === "suspend");
            }),
          );
        }
        work.push(signIn(person.email));
      }
      await Promise.all(work);
    }

    const failures = answers.filter((answer) => answer.status >= 500).map((answer) => `${answer.name}: ${answer.status}`);
    expect(failures).toEqual([]);
    // The administrators' changes all went through; sign-ins of suspended people are refused, not failed.
    expect(answers.filter((answer) => !answer.name.startsWith("sign-in") && answer.status !== 303)).toEqual([]);
    expect(answers.filter((answer) => answer.name.startsWith("sign-in") && ![200, 303, 401].includes(answer.status))).toEqual([]);

    const names = new Map([
      [alpha.id, "Alpha"],
      [zulu.id, "Zulu"],
    ]);
    for (const person of people) {
      const held = (await listPermissionsOfUser(ctx.db, person.uid)).map((row) => `${names.get(row.applicationId)}:${row.permission}`).sort();
      const expected = (lastGrid.get(person.uid) ?? []).map((entry) => `${names.get(entry.slice(0, entry.indexOf(":")))}${entry.slice(entry.indexOf(":"))}`).sort();
      expect(held, person.email).toEqual(expected);
      expect((await findUserByUid(ctx.db, person.uid))?.suspendedAt !== null, person.email).toBe(suspended.get(person.uid) ?? false);
    }

    const metrics = (await app.inject({ method: "GET", url: "/metrics" })).body;
    const retried = [...metrics.matchAll(/^database_transaction_retries_total\{reason="(\w+)"\} (\d+)$/gm)].map(([, reason, count]) => `${reason} ${count}`);
    expect(retried).toHaveLength(2);
    const unresolved = [...metrics.matchAll(/^database_transaction_conflicts_unresolved_total\{reason="(\w+)"\} (\d+)$/gm)].map(([, , count]) => Number(count));
    expect(unresolved).toEqual([0, 0]);
    console.info(`concurrent Sign-on changes: ${ROUNDS} rounds, ${answers.length} requests, 5xx: 0, retries: ${retried.join(", ")}`);
  }, 300_000);
});
