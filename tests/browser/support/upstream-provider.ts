// An organisation's own identity provider for the browser tests: node-oidc-provider, with its development login and
// consent pages, its own signing key, back-channel logout and logout through its end-session page.
import { generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface UpstreamPerson {
  name: string;
  /** The provider refuses them (a leaver, disabled there). */
  disabled?: boolean;
}

export interface UpstreamProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The people it knows, by the login (their e-mail address) typed on its page. */
  people: Map<string, UpstreamPerson>;
  /** Back-channel logouts it sent, and why any failed. */
  logouts: { ok: boolean; detail: string }[];
  /** Starts answering, with Sign-on's client registered (its redirect URI and back-channel logout URI). */
  serve(client: { redirectUri: string; backchannelLogoutUri: string }): void;
  close(): Promise<void>;
}

/** Listens on a free port at once (so its issuer can be given to Sign-on); answers once `serve` registers Sign-on. */
export async function startUpstreamProvider(): Promise<UpstreamProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const people = new Map<string, UpstreamPerson>();
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const upstream: UpstreamProvider = {
    issuer,
    clientId: "tessera-sign-on",
    clientSecret: "upstream-client-secret-upstream-client-secret",
    people,
    logouts: [],
    serve(client) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: upstream.clientId,
            client_secret: upstream.clientSecret,
            redirect_uris: [client.redirectUri],
            backchannel_logout_uri: client.backchannelLogoutUri,
            backchannel_logout_session_required: true,
            grant_types: ["authorization_code"],
            response_types: ["code"],
            token_endpoint_auth_method: "client_secret_basic",
          },
        ],
        jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "upstream-1", use: "sig", alg: "RS256" }] },
        claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
        features: { devInteractions: { enabled: true }, backchannelLogout: { enabled: true }, rpInitiatedLogout: { enabled: true } },
        pkce: { required: () => true },
        cookies: { keys: ["upstream-cookie-key-upstream-cookie-key"] },
        // Sign-on is on loopback here: the provider's guard against posting to special-use addresses is left out.
        fetch: (url, options) => globalThis.fetch(url, { ...options, dispatcher: undefined } as RequestInit),
        findAccount: (_ctx, sub) => {
          const person = people.get(sub);
          if (person === undefined) return undefined;
          return Promise.resolve({ accountId: sub, claims: () => ({ sub, email: sub, email_verified: true, name: person.name }) });
        },
      });
      provider.on("backchannel.success", () => upstream.logouts.push({ ok: true, detail: "" }));
      provider.on("backchannel.error", (_ctx, error: Error) => upstream.logouts.push({ ok: false, detail: `${error.message} ${String((error as { cause?: unknown }).cause ?? "")}` }));
      const handle = provider.callback();
      server.on("request", (request, response) => {
        void (async () => {
          // A leaver: the provider knows them as disabled and answers Sign-on with access_denied, as soon as it is asked.
          if (request.method === "GET" && /^\/interaction\/[^/]+$/.test(request.url ?? "")) {
            const details = await provider.interactionDetails(request, response);
            const hint = typeof details.params["login_hint"] === "string" ? details.params["login_hint"] : "";
            if (people.get(hint)?.disabled) {
              await provider.interactionFinished(request, response, { error: "access_denied", error_description: "The account is disabled" }, { mergeWithLastSubmission: false });
              return;
            }
          }
          await handle(request, response);
        })();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return upstream;
}
