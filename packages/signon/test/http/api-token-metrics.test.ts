import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { issueApiUserToken, revokeApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { grants } from "../../src/db/schema.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { signon } = await useTestSignon();
const { app, ctx, clock } = signon;
const gauge = "signon_api_token_soonest_expiry_timestamp_seconds";

function samples(text: string): string[] {
  return text.split("\n").filter((line) => line.startsWith(`${gauge}{`));
}

describe("GET /metrics: soonest API token expiry per application", () => {
  it("gives each application the expiry of its first live API token to expire, in Unix seconds, and leaves revoked and expired ones out", async () => {
    const search = await createApp(ctx, { name: "Search" });
    const reports = await createApp(ctx, { name: "Reports" });
    const admin = await createUser(ctx, { role: "superadmin" });
    const robot = await createApiUser(ctx, { name: "Robot", email: "robot@example.org" });
    const other = await createApiUser(ctx, { name: "Other", email: "other@example.org" });
    const issue = (user: typeof robot, applicationId: string, days: number) =>
      issueApiUserToken(ctx, { user, applicationId, permissions: [], expiresInDays: days }, admin.uid);
    const seconds = (days: number) => Math.floor(clock.now().getTime() / 1000) + days * 86_400;

    await issue(robot, search.application.id, 10);
    await issue(other, search.application.id, 90);
    await issue(robot, reports.application.id, 400);
    await issue(robot, reports.application.id, 1);

    const text = (await app.inject({ method: "GET", url: "/metrics" })).body;
    expect(text).toContain(`# TYPE ${gauge} gauge`);
    expect(samples(text).sort()).toEqual([`${gauge}{application="Reports"} ${seconds(1)}`, `${gauge}{application="Search"} ${seconds(10)}`]);

    clock.advance(2 * 86_400); // Reports' one-day token has expired
    const [grant] = await ctx.db.select().from(grants).where(and(eq(grants.applicationId, search.application.id), eq(grants.userUid, robot.uid)));
    expect(await revokeApiUserToken(ctx, robot, grant?.id as string, { uid: admin.uid, origin: { ip: null, userAgent: null } })).toBe(true);
    const later = (await app.inject({ method: "GET", url: "/metrics" })).body;
    expect(samples(later).sort()).toEqual([`${gauge}{application="Reports"} ${seconds(398)}`, `${gauge}{application="Search"} ${seconds(88)}`]);
  });
});
