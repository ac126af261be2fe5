import { setOpenIdSettings } from "../../src/oidc/client-settings.js";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { issueApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser, unlockUser } from "../../src/accounts/manage-users.js";
import { settleBackgroundWork } from "../../src/background-work.js";
import type { SignonContext } from "../../src/context.js";
import { sha256Hex } from "../../src/security/random.js";
import { decodeEntities, InjectBrowser, signedInBrowser } from "./browser.js";
import type { TestClock } from "./clock.js";
import { createApp, createUser, defaultPassword } from "./factories.js";
import { percentEncode, type FieldValue, type FuzzAuthorization, type FuzzCaller, type FuzzRequest, type QueryPiece, type RefName } from "./fuzz-requests.js";
import { createTestOrganisation } from "../web/users-support.js";

/** The password of the accounts the run signs in with; no request of the run knows it. */
const PROTECTED_PASSWORD = "only the fuzz harness knows this passphrase";

interface SessionCaller {
  uid: string;
  browser: InjectBrowser;
  csrf: string;
}

/** A request as sent, for messages and the report. */
export interface SentRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload: string | Buffer | null;
}

/**
 * The world a fuzz run acts on: a superadmin who is never a target (the
 * keeper; signs in after the run), the signed-in superadmin and normal user
 * the requests come from, a visitor with only a CSRF cookie, victims of
 * every role in two organisations, an OAuth client (never a target, so its
 * secret stays known), a second application with a push address, and an API
 * user with a token. Codes and tokens the responses hand out are kept, so
 * later requests can use, replay and revoke them.
 */
export class FuzzScenario {
  readonly codes: string[] = [];
  readonly accessTokens: string[] = [];
  readonly refreshTokens: string[] = [];
  readonly idTokens: string[] = [];
  #callers = new Map<"admin" | "normal" | "visitor", SessionCaller>();
  readonly #protectedUsers: string[];

  private constructor(
    readonly app: FastifyInstance,
    readonly ctx: SignonContext,
    readonly clock: TestClock,
    readonly keeper: { uid: string; email: string },
    readonly client: { id: string; clientId: string; clientSecret: string; redirectUri: string },
    protectedUsers: string[],
  ) {
    this.#protectedUsers = protectedUsers;
  }

  static async create(app: FastifyInstance, ctx: SignonContext, clock: TestClock): Promise<FuzzScenario> {
    const keeper = await createUser(ctx, { role: "superadmin", password: PROTECTED_PASSWORD });
    const first = await createTestOrganisation(ctx);
    const second = await createTestOrganisation(ctx);
    const registered = await createApp(ctx, { permissions: ["editor", "admin"], delegatablePermissions: ["editor"] });
    // Also an OpenID Connect client, so that requests with scope openid get ID tokens, userinfo and logout.
    const client = {
      ...registered,
      application: await setOpenIdSettings(
        ctx,
        registered.application,
        { scopes: ["openid", "profile", "email"], idTokenAlg: "ES256", postLogoutRedirectUris: ["https://fuzz-logout.example/done"], backchannelLogoutUri: "http://127.0.0.1:9/backchannel-logout" },
        { uid: null, origin: null },
      ),
    };
    const editorial = await createApp(ctx, { permissions: ["writer"], pushBaseUrl: "http://127.0.0.1:9/" });
    const signin = { [client.application.name]: ["signin"], [editorial.application.name]: ["signin", "writer"] };
    const fuzzer = await createUser(ctx, { role: "superadmin", password: PROTECTED_PASSWORD, permissions: signin });
    const normal = await createUser(ctx, { role: "normal", password: PROTECTED_PASSWORD, organisationId: first.id, permissions: signin });
    await createUser(ctx, { role: "normal", organisationId: first.id, permissions: signin });
    await createUser(ctx, { role: "normal", organisationId: second.id, permissions: { [client.application.name]: ["signin", "editor"] } });
    await createUser(ctx, { role: "organisation_admin", organisationId: first.id, permissions: signin });
    const admin = await createUser(ctx, { role: "admin", permissions: signin });
    // A victim's passkey, for the routes that name one; the callers have none, so their sign-in stays one step.
    await ctx.db.execute(sql`insert into signon.passkeys (id, user_uid, credential_id, public_key, sign_count, name, device_type, backed_up, created_at)
      values (gen_random_uuid(), ${admin.uid}, ${randomBytes(16).toString("base64url")}, 'AA', 0, 'Fuzz key', 'singleDevice', false, now())`);
    await ctx.db.execute(sql`update signon.users set passkey_count = 1 where uid = ${admin.uid}`);
    const robot = await createApiUser(ctx, { name: "Robot", email: `robot-${randomBytes(4).toString("hex")}@example.org` });
    await issueApiUserToken(ctx, { user: robot, applicationId: client.application.id, permissions: ["editor"], expiresInDays: 30 }, keeper.uid);

    const scenario = new FuzzScenario(
      app,
      ctx,
      clock,
      { uid: keeper.uid, email: keeper.email },
      { id: client.application.id, clientId: client.clientId, clientSecret: client.clientSecret, redirectUri: client.redirectUri },
      [keeper.uid, fuzzer.uid, normal.uid],
    );
    scenario.#callers.set("admin", await scenario.#signIn(fuzzer.uid));
    scenario.#callers.set("normal", await scenario.#signIn(normal.uid));
    const visitor = new InjectBrowser(app);
    scenario.#callers.set("visitor", { uid: "", browser: visitor, csrf: csrfOf(await visitor.get("/sign-in")) });
    return scenario;
  }

  /**
   * Signs a protected account in. The run's failed sign-ins can hold up its
   * address (30 failures per IP in 10 minutes) and, once a request gave the
   * account a new e-mail address, refuse this source for that address or
   * lock it: then the operator unlocks it (which forgets the failures for
   * the address) and waits out the per-IP window, as one would.
   */
  async #signIn(uid: string): Promise<SessionCaller> {
    const [user] = (await this.ctx.db.execute(sql`select email from signon.users where uid = ${uid}`)).rows as { email: string }[];
    let browser: InjectBrowser;
    try {
      browser = await signedInBrowser(this.app, user!.email, PROTECTED_PASSWORD);
    } catch {
      await unlockUser(this.ctx, user!.email);
      this.clock.advance(11 * 60);
      try {
        browser = await signedInBrowser(this.app, user!.email, PROTECTED_PASSWORD);
      } catch (error) {
        const events = (await this.ctx.db.execute(sql`select action, details from signon.audit_events where subject_uid = ${uid} order by id desc limit 8`)).rows;
        throw new Error(`a protected account can no longer sign in; its last events: ${JSON.stringify(events)}`, { cause: error });
      }
    }
    return { uid, browser, csrf: csrfOf(await browser.get("/account")) };
  }

  /** Signs the admin and the normal user in again if a request of the run signed them out (a sign-out form, say). */
  async keepSignedIn(): Promise<void> {
    for (const name of ["admin", "normal"] as const) {
      const caller = this.#callers.get(name)!;
      const page = await caller.browser.get("/account");
      if (page.statusCode !== 200) this.#callers.set(name, await this.#signIn(caller.uid));
    }
  }

  /** Whether the keeper, whom no request targets, can still sign in through the form. */
  async keeperSignsIn(): Promise<boolean> {
    // Past the run's own failed sign-ins from this address (30 per IP in 10 minutes).
    this.clock.advance(11 * 60);
    const browser = new InjectBrowser(this.app);
    const response = await browser.signIn("/sign-in", this.keeper.email, PROTECTED_PASSWORD);
    return response.statusCode === 303 && (await browser.get("/account")).statusCode === 200;
  }

  async #candidates(name: RefName): Promise<string[]> {
    const query = async (text: ReturnType<typeof sql>) => ((await this.ctx.db.execute(text)).rows as { v: string | number }[]).map((row) => String(row.v));
    const excluded = sql.join(this.#protectedUsers.map((uid) => sql`${uid}::uuid`), sql`, `);
    switch (name) {
      case "user":
        return query(sql`select uid as v from signon.users where uid not in (${excluded}) order by created_at, uid`);
      case "victimEmail":
        return query(sql`select email as v from signon.users where uid not in (${excluded}) and not is_api_user order by created_at, uid`);
      case "apiUser":
        return query(sql`select uid as v from signon.users where is_api_user order by created_at, uid`);
      case "application":
        return query(sql`select id as v from signon.applications where id <> ${this.client.id} order by created_at, id`);
      case "organisation":
        return query(sql`select id as v from signon.organisations order by created_at, id`);
      case "grant":
        return query(sql`select id as v from signon.grants where kind = 'issued' order by created_at, id`);
      case "push":
        return query(sql`select id as v from signon.push_deliveries order by id`);
      case "passkey":
        return query(sql`select id as v from signon.passkeys order by created_at, id`);
      case "auditEvent":
        return query(sql`select id as v from signon.audit_events order by id desc limit 100`);
      case "invitationBatch":
        return query(sql`select id as v from signon.invitation_batches order by created_at, id`);
      case "permissionBox":
        return query(sql`select id || ':' || permission as v from signon.applications, unnest(supported_permissions) as permission order by 1`);
      case "invitationToken":
      case "resetToken":
      case "unlockToken":
      case "emailChangeToken": {
        const path = { invitationToken: "invitations", resetToken: "password-reset", unlockToken: "unlock", emailChangeToken: "account/email" }[name];
        const mails = await query(sql`select text_body as v from signon.dev_mails order by id desc limit 20`);
        const tokens = mails.flatMap((text) => [...text.matchAll(new RegExp(`/${path}/([A-Za-z0-9_-]{20,})`, "g"))].map((match) => match[1]!));
        // Not the protected accounts' links: a request may have given one a fresh address that a reset form then names.
        const theirs = new Set(await query(sql`select token_hash as v from signon.account_links where user_uid in (${excluded})`));
        return tokens.filter((token) => !theirs.has(sha256Hex(token)));
      }
      case "clientId":
        return [this.client.clientId];
      case "clientSecret":
        return [this.client.clientSecret];
      case "redirectUri":
        return [this.client.redirectUri];
      case "code":
        return newestFirst(this.codes);
      case "accessToken":
        return newestFirst(this.accessTokens);
      case "refreshToken":
        return newestFirst(this.refreshTokens);
      case "idToken":
        return newestFirst(this.idTokens);
      case "csrf":
        return [];
    }
  }

  async #resolve(value: FieldValue, caller: FuzzCaller): Promise<string> {
    if (typeof value === "string") return value;
    if (value.ref === "csrf") {
      const session = caller === "admin" || caller === "normal" || caller === "visitor" ? this.#callers.get(caller) : this.#callers.get("visitor");
      return session?.csrf ?? "x";
    }
    const candidates = await this.#candidates(value.ref);
    return candidates.length === 0 ? `no-${value.ref}-yet` : candidates[value.pick % candidates.length]!;
  }

  async #encodePieces(pieces: readonly QueryPiece[], caller: FuzzCaller): Promise<string> {
    const parts: string[] = [];
    for (const piece of pieces) {
      parts.push("raw" in piece ? piece.raw : `${percentEncode(piece.name)}=${percentEncode(await this.#resolve(piece.value, caller))}`);
    }
    return parts.join("&");
  }

  #cookie(caller: FuzzCaller): string | null {
    const visitor = this.#callers.get("visitor")!.browser.cookieHeader;
    switch (caller) {
      case "admin":
      case "normal":
        return this.#callers.get(caller)!.browser.cookieHeader;
      case "visitor":
        return visitor;
      case "stale-session":
        return `${visitor}; signon_session=${randomBytes(32).toString("base64url")}`;
      case "junk-cookie":
        return "signon_session=%E0%A4%A; signon_csrf=%ZZ; =; signon_session=x";
      case "none":
        return null;
    }
  }

  #authorization(kind: FuzzAuthorization): string | null {
    switch (kind) {
      case "none":
        return null;
      case "basic-client":
        return `Basic ${Buffer.from(`${encodeURIComponent(this.client.clientId)}:${encodeURIComponent(this.client.clientSecret)}`).toString("base64")}`;
      case "basic-junk":
        return "Basic %%%";
      case "bearer":
        return `Bearer ${this.accessTokens.at(-1) ?? "none-yet"}`;
      case "bearer-junk":
        return `Bearer ${"0".repeat(64)}`;
      case "bearer-malformed":
        return "Bearer a b c";
    }
  }

  /** Resolves a generated request against the scenario as it is now. */
  async prepare(request: FuzzRequest): Promise<SentRequest> {
    const segments: string[] = [];
    for (const part of request.path) segments.push("raw" in part ? part.raw : percentEncode(await this.#resolve(part.value, request.caller)));
    const query = await this.#encodePieces(request.query, request.caller);
    const url = `/${segments.join("/")}${query === "" ? "" : `?${query}`}`;
    const headers: Record<string, string> = { accept: "text/html,application/json" };
    const cookie = this.#cookie(request.caller);
    if (cookie !== null) headers["cookie"] = cookie;
    const authorization = this.#authorization(request.authorization);
    if (authorization !== null) headers["authorization"] = authorization;
    const body = request.body;
    let payload: string | Buffer | null = null;
    if (body.kind !== "none" && body.contentType !== null) headers["content-type"] = body.contentType;
    if (body.kind === "form") payload = await this.#encodePieces(body.fields, request.caller);
    else if (body.kind === "raw") payload = body.payload;
    else if (body.kind === "json") {
      const { fields, wrong } = body.value as { fields: QueryPiece[]; wrong: Record<string, unknown> };
      const object: Record<string, unknown> = {};
      for (const piece of fields) if (!("raw" in piece)) object[piece.name] = await this.#resolve(piece.value, request.caller);
      payload = JSON.stringify({ ...object, ...wrong });
    }
    return { method: request.method, url, headers, payload };
  }

  /** Sends a prepared request and keeps the codes and tokens it hands out. */
  async send(request: SentRequest): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({
      method: request.method as "GET",
      url: request.url,
      headers: request.headers,
      ...(request.payload === null ? {} : { payload: request.payload }),
    });
    // What a request began after its answer (a reset request's mail) ends before the checks read the database.
    await settleBackgroundWork(10_000);
    const location = response.headers.location;
    if (typeof location === "string" && location.startsWith(this.client.redirectUri)) {
      const code = new URL(location).searchParams.get("code");
      if (code !== null) this.codes.push(code);
    }
    if (response.statusCode === 200 && request.method !== "HEAD" && String(response.headers["content-type"]).startsWith("application/json")) {
      const body = response.json<{ access_token?: unknown; refresh_token?: unknown; id_token?: unknown }>();
      if (typeof body.id_token === "string") this.idTokens.push(body.id_token);
      if (typeof body.access_token === "string") this.accessTokens.push(body.access_token);
      if (typeof body.refresh_token === "string") this.refreshTokens.push(body.refresh_token);
    }
    return response;
  }
}

/** The newest of `issued` half of the time (it is most likely still good), else one of the four before it (used, rotated or revoked). */
function newestFirst(issued: readonly string[]): string[] {
  const newest = issued.at(-1);
  return newest === undefined ? [] : [newest, newest, newest, newest, ...issued.slice(-5, -1)];
}

function csrfOf(page: LightMyRequestResponse): string {
  const token = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1];
  if (token === undefined) throw new Error(`no CSRF token on the page (status ${page.statusCode})`);
  return decodeEntities(token);
}

export { defaultPassword };
