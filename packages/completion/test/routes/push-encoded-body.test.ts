import { describe, expect, it } from "vitest";
import { COMPLETION_APP } from "../support/real-signon.js";
import { useHarness } from "../support/harness.js";

// Sign-on's push receivers answer in their own shape (`{"error","error_description"}`), a compressed body too.
const h = await useHarness({ signonPushes: true });
const push = await h.signon.tokenFor("encoded-push@example.com", [], { apiUser: true });
await h.database.pool.query(
  `insert into signon.user_permissions (user_uid, application_id, permission, created_at)
   select $1, id, 'user_update_permission', now() from signon.applications where name = $2`,
  [push.uid, COMPLETION_APP],
);

describe("Sign-on's push receivers, sent a body in a content coding", () => {
  it.each([
    ["PUT", `/auth/gds/api/users/${push.uid}`],
    ["POST", `/auth/gds/api/users/${push.uid}/reauth`],
  ] as const)("%s %s answers 415 in the receivers' own shape", async (method, url) => {
    const response = await h.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${push.token}`, "content-type": "application/json", "content-encoding": "gzip" },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ error: "invalid_request", error_description: "Unsupported Content-Encoding: send the body without a content coding." });
  });

  it("leaves the API's own routes answering with their `detail`", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: "/api/completion/v1/completion-batch",
      headers: { authorization: `Bearer ${push.token}`, "content-type": "application/json", "content-encoding": "gzip" },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ detail: "Unsupported Content-Encoding: send the body without a content coding." });
  });
});

describe("a path no route serves, sent a body", () => {
  it("answers 404 before reading it, whatever its coding or content", async () => {
    const response = await h.app.inject({
      method: "PUT",
      url: "/auth/gds/api/users/?%00=1",
      headers: { authorization: `Bearer ${push.token}`, "content-type": "application/json", "content-encoding": "gzip" },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ detail: "Not found." });
  });
});
