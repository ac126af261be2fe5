import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { grantPermissions } from "../../src/applications/permissions.js";
import { auditEvents } from "../../src/db/schema.js";
import { exportCredentials } from "../../src/deployment/export-credentials.js";
import { hostRewrite } from "../../src/deployment/host-rewrite.js";
import { rewriteApplicationUris } from "../../src/deployment/rewrite-application-uris.js";
import { applicationChangeActions } from "../../src/repositories/application-events.js";
import { createApp, createUser } from "../support/factories.js";
import { obtainCode } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx, clock } = signon;

/** The rows of an event log page: the event's words and who did it. */
function eventRows(body: string): [string, string][] {
  return [...body.matchAll(/<tr>\s*<td><time datetime="[^"]+">[^<]*<\/time><\/td>\s*<td>([^<]*)<\/td>\s*<td>([^<]*)<\/td>/g)].map((match) => [
    (match[1] ?? "").replaceAll("&#39;", "'").replaceAll("&gt;", ">"),
    match[2] ?? "",
  ]);
}

describe("GET /applications/:id/events", () => {
  it("lists the changes to the application, newest first: URIs rewritten, credentials exported, settings, not its sign-ins or other applications' events", async () => {
    const publisher = await createApp(ctx, { name: "Publisher", redirectUris: ["https://publisher.live.example/auth/gds/callback"] });
    await createApp(ctx, { name: "Other", redirectUris: ["https://other.live.example/auth/gds/callback"] });
    const person = await createUser(ctx, { permissions: { Publisher: ["signin"] } });
    await obtainCode(app, publisher, person.email);
    clock.advance(60);
    await rewriteApplicationUris(ctx, hostRewrite("*.live.example", "*.staging.example"), { dryRun: false });
    clock.advance(60);
    const robot = await createApiUser(ctx, { email: "robot@example.org", name: "Indexing robot" });
    await grantPermissions(ctx, { email: robot.email, application: "Publisher", permissions: ["signin"] });
    await exportCredentials(ctx, { applications: ["Publisher"], apiUsers: [{ email: robot.email, application: "Publisher" }], namespace: "publishing", destination: { kind: "stdout" }, dryRun: false });

    const { browser } = await signedInAs(app, ctx, "superadmin");
    const settings = await browser.get(`/applications/${publisher.application.id}`);
    expect(settings.body).toContain(`<a href="/applications/${publisher.application.id}/events">Event log of Publisher</a>`);
    const page = await browser.get(`/applications/${publisher.application.id}/events`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("<h1>Event log of Publisher</h1>");
    const by = "Sign-on (a command or a job)";
    expect(eventRows(page.body)).toEqual([
      ["Credentials exported to Kubernetes: Indexing robot as secret signon-token-indexing-robot-publisher in namespace publishing, with a new API token (written to standard output)", by],
      ["Credentials exported to Kubernetes as secret signon-app-publisher in namespace publishing, with a new client secret (written to standard output)", by],
      ["Application secret rotated", by],
      ["Application URIs rewritten for another environment from *.live.example to *.staging.example (1 URI)", by],
      ["Application created", by],
    ]);
  });

  it("pages 50 at a time, answers 400 to a bad cursor and 404 to an unknown application, and is for superadmins only", async () => {
    const publisher = await createApp(ctx, { name: "Busy" });
    const at = clock.now();
    await ctx.db.insert(auditEvents).values(
      Array.from({ length: 52 }, (_, i) => ({ occurredAt: new Date(at.getTime() + i * 1000), action: "application_updated", applicationId: publisher.application.id, details: { changed: ["name"] } })),
    );
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const first = await browser.get(`/applications/${publisher.application.id}/events`);
    expect(eventRows(first.body)).toHaveLength(50);
    const older = /<a href="([^"]*)" rel="next">Older events<\/a>/.exec(first.body)?.[1];
    expect(older).toMatch(/\?before=\d+$/);
    const second = await browser.get(older ?? "");
    // The 3rd: "Application created", the oldest.
    expect(eventRows(second.body).map(([text]) => text)).toEqual(["Application changed (name)", "Application changed (name)", "Application created"]);
    for (const query of ["before=0", "before=abc", "page=2"]) expect((await browser.get(`/applications/${publisher.application.id}/events?${query}`)).statusCode, query).toBe(400);
    expect((await browser.get("/applications/00000000-0000-4000-8000-000000000000/events")).statusCode).toBe(404);
    for (const role of ["admin", "organisation_admin", "normal"] as const) {
      const { browser: other } = await signedInAs(app, ctx, role);
      expect((await other.get(`/applications/${publisher.application.id}/events`)).statusCode, role).toBe(403);
    }
  });

  it("reads the actions that the partial index audit_events_application_change_idx holds, so the index serves the page", async () => {
    const migration = await readFile(new URL("../../migrations/0018_application_change_events.sql", import.meta.url), "utf8");
    const indexed = /"action" in \(([^)]*)\)/.exec(migration)?.[1] ?? "";
    expect([...indexed.matchAll(/'([a-z_]+)'/g)].map((match) => match[1]).sort()).toEqual([...applicationChangeActions].sort());
  });
});
