import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { revokePermissions } from "../../src/applications/permissions.js";
import { issueApiUserToken } from "../../src/accounts/api-users.js";
import { listPushes } from "../../src/repositories/push-deliveries.js";
import { runSignonCli } from "../support/cli.js";
import { createApp, createUser } from "../support/factories.js";
import { exchangeCode, obtainCode } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

// After the database was restored to an earlier point (docs/operations.md, "Backups and restores"): applications
// were told of changes the restore took back, and sessions ended or tokens revoked since the restore point work
// again. One command tells every application what Sign-on holds now and, where the operator chooses, signs
// everyone out.

const { database, signon } = await useTestSignon();
const followUp = (...argv: string[]) => runSignonCli(database.url, ["restore", "follow-up", ...argv, "--json"], { SIGNON_SECRET_KEY: "5e".repeat(32) });

/** Pat signed in to Board (a code exchanged) and holds a permission on Ledger; Kim held one on Ledger; Sam holds nothing anywhere; a robot has an API token for Board. */
async function restoredWorld() {
  const board = await createApp(signon.ctx, { name: "Board", permissions: ["poster"] });
  const ledger = await createApp(signon.ctx, { name: "Ledger", permissions: ["clerk"] });
  await createApp(signon.ctx, { name: "Quiet", permissions: ["reader"], pushEnabled: false });
  const pat = await createUser(signon.ctx, { email: "pat@example.org", permissions: { Board: ["signin"], Ledger: ["signin", "clerk"], Quiet: ["signin"] } });
  await createUser(signon.ctx, { email: "sam@example.org" });
  // Kim held signin on Ledger once: Ledger was told of the grant and of the revocation, and knows Kim.
  const kim = await createUser(signon.ctx, { email: "kim@example.org", permissions: { Ledger: ["signin"] } });
  await revokePermissions(signon.ctx, { email: kim.email, application: "Ledger", permissions: ["signin"] });
  const { code, browser } = await obtainCode(signon.app, board, pat.email);
  const exchanged = await exchangeCode(signon.app, board, code);
  expect(exchanged.statusCode).toBe(200);
  const robot = await createApiUser(signon.ctx, { email: "robot@example.org", name: "Robot" });
  const keeper = await createUser(signon.ctx, { role: "superadmin" });
  const robotToken = await issueApiUserToken(signon.ctx, { user: robot, applicationId: board.application.id, permissions: ["signin"], expiresInDays: 30 }, keeper.uid);
  const tokens = exchanged.json<{ access_token: string; refresh_token: string }>();
  // Everyone's pushes so far delivered: only what the command queues is pending.
  await database.db.execute(sql`update signon.push_deliveries set status = 'delivered'`);
  return { board, ledger, pat, browser, tokens, robotToken: robotToken.accessToken };
}

async function pending(): Promise<string[]> {
  return (await listPushes(signon.ctx.db, { status: "pending" })).map((push) => `${push.kind} ${push.email} -> ${push.application}`).sort();
}

async function userJson(token: string): Promise<number> {
  return (await signon.app.inject({ method: "GET", url: "/user.json", headers: { authorization: `Bearer ${token}` } })).statusCode;
}

describe("signon restore follow-up", () => {
  it("queues each person's current details to every application that issued them a token, where they hold a permission or that was told about them, and signs nobody out", async () => {
    const { pat, tokens, browser, robotToken } = await restoredWorld();
    const run = await followUp();
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(run.stdout)).toEqual({ update_pushes: 4, signed_out: null });
    expect(await pending()).toEqual(["update kim@example.org -> Ledger", `update ${pat.email} -> Board`, `update ${pat.email} -> Ledger`, "update robot@example.org -> Board"]);
    expect(await userJson(tokens.access_token)).toBe(200);
    expect(await userJson(robotToken)).toBe(200);
    expect((await browser.get("/account")).statusCode).toBe(200);
  });

  it("with --sign-everyone-out, also ends every session, revokes people's access and refresh tokens (not API users') and queues their sign-out pushes", async () => {
    const { pat, tokens, browser, robotToken, board } = await restoredWorld();
    const run = await followUp("--sign-everyone-out");
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(run.stdout)).toEqual({
      update_pushes: 4,
      signed_out: { sessions: expect.any(Number), access_tokens: 1, refresh_tokens: 1, reauth_pushes: 3 },
    });
    expect(JSON.parse(run.stdout).signed_out.sessions).toBeGreaterThanOrEqual(1);
    expect(await pending()).toEqual([
      "reauth kim@example.org -> Ledger",
      "update kim@example.org -> Ledger",
      `reauth ${pat.email} -> Board`,
      `reauth ${pat.email} -> Ledger`,
      `update ${pat.email} -> Board`,
      `update ${pat.email} -> Ledger`,
      "update robot@example.org -> Board",
    ].sort());
    expect(await userJson(tokens.access_token)).toBe(401);
    const refreshed = await signon.app.inject({
      method: "POST",
      url: "/oauth/token",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: board.clientId, client_secret: board.clientSecret }).toString(),
    });
    expect(refreshed.statusCode).toBe(400);
    expect(await userJson(robotToken)).toBe(200);
    const account = await browser.get("/account");
    expect(account.statusCode).toBe(303);
  });

  it("refuses an unknown option", async () => {
    const run = await runSignonCli(database.url, ["restore", "follow-up", "--everyone"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Usage: signon restore follow-up [--sign-everyone-out] [--json]");
  });
});
