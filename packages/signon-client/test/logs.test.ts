import { describe, expect, it } from "vitest";
import { Browser } from "./support/browser.js";
import { createUser, useHarness } from "./support/client-app.js";

const logLines: string[] = [];
const h = useHarness({ logLines });

describe("logs", () => {
  it("never contain a bearer token, an authorization code or a session id", async () => {
    const user = h.signon.addUser(createUser());
    const pusher = h.signon.addUser(createUser({ permissions: ["user_update_permission"] }));
    const apiToken = h.signon.issueApiToken(user.uid);
    const pushToken = h.signon.issueApiToken(pusher.uid);
    const browser = new Browser(h.app);

    await browser.signIn(h.signon, user.uid);
    const sessionId = browser.cookies.get("signon_client_session") ?? "";
    await browser.get("/");
    await h.app.inject({ method: "GET", url: "/api/whoami", headers: { authorization: `Bearer ${apiToken}` } });
    await h.app.inject({ method: "GET", url: "/api/whoami", headers: { authorization: "Bearer rejected-token" } });
    h.network.down = true;
    await h.app.inject({ method: "GET", url: "/api/whoami", headers: { authorization: "Bearer while-down" } });
    h.network.down = false;
    await h.app.inject({
      method: "POST",
      url: `/auth/gds/api/users/${user.uid}/reauth`,
      headers: { authorization: `Bearer ${pushToken}` },
      payload: {},
    });
    const codeExchange = h.signon.tokenRequests[0] ?? {};

    const log = logLines.join("");
    expect(log).toContain('"msg":"signed in through Sign-on"');
    expect(log).toContain("Sign-on unavailable");
    for (const secret of [apiToken, pushToken, "rejected-token", "while-down", sessionId, codeExchange.code ?? "?"]) {
      expect(log).not.toContain(secret);
    }
  });
});
