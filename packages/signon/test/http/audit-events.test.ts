import { asc } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents } from "../../src/db/schema.js";
import { createApp, createUser } from "../support/factories.js";
import { exchangeCode, obtainCode, postForm, refresh } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();

describe("audit events", () => {
  it("record who did what, when, from where and on which application, through a whole flow", async () => {
    const client = await createApp(signon.ctx, { name: "Publisher" });
    const user = await createUser(signon.ctx, { permissions: { Publisher: ["signin"] } });
    const { code } = await obtainCode(signon.app, client, user.email);
    const tokens = (await exchangeCode(signon.app, client, code)).json<{ refresh_token: string }>();
    await refresh(signon.app, client, tokens.refresh_token);
    await refresh(signon.app, client, tokens.refresh_token);
    await exchangeCode(signon.app, client, code);
    await postForm(signon.app, "/token", { grant_type: "refresh_token", refresh_token: "x", client_id: client.clientId, client_secret: "wrong" });

    const events = await database.db.select().from(auditEvents).orderBy(asc(auditEvents.id));
    const at = signon.clock.now();
    const fromInject = { ip: "127.0.0.1", userAgent: "lightMyRequest" };
    expect(events.map(({ action, subjectUid, applicationId, ip, userAgent, occurredAt }) => ({ action, subjectUid, applicationId, ip, userAgent, occurredAt }))).toEqual([
      { action: "application_created", subjectUid: null, applicationId: client.application.id, ip: null, userAgent: null, occurredAt: at },
      { action: "user_created", subjectUid: user.uid, applicationId: null, ip: null, userAgent: null, occurredAt: at },
      { action: "permissions_granted", subjectUid: user.uid, applicationId: client.application.id, ip: null, userAgent: null, occurredAt: at },
      { action: "sign_in", subjectUid: user.uid, applicationId: null, ...fromInject, occurredAt: at },
      { action: "authorization_code_issued", subjectUid: user.uid, applicationId: client.application.id, ...fromInject, occurredAt: at },
      { action: "tokens_issued", subjectUid: user.uid, applicationId: client.application.id, ...fromInject, occurredAt: at },
      { action: "tokens_refreshed", subjectUid: user.uid, applicationId: client.application.id, ...fromInject, occurredAt: at },
      { action: "refresh_token_reused", subjectUid: user.uid, applicationId: client.application.id, ...fromInject, occurredAt: at },
      { action: "authorization_code_replayed", subjectUid: user.uid, applicationId: client.application.id, ...fromInject, occurredAt: at },
      { action: "client_authentication_failed", subjectUid: null, applicationId: client.application.id, ...fromInject, occurredAt: at },
    ]);
  });
});
