import { randomBytes } from "node:crypto";
import { Type, type TObject } from "@fastify/type-provider-typebox";
import { eq } from "drizzle-orm";
import fc from "fast-check";
import Fastify, { type LightMyRequestResponse, type RouteOptions } from "fastify";
import { describe, expect, it } from "vitest";
import { issueApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { batchFileMaxBytes } from "../../src/accounts/invitation-csv.js";
import { settleBackgroundWork } from "../../src/background-work.js";
import { users } from "../../src/db/schema.js";
import { bodyLimitBytes } from "../../src/http/form-content-type.js";
import { overLongAnswer, registerOverLongAnswers } from "../../src/web/over-long-fields.js";
import { InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { auditActionsAfter, lastAuditEventId } from "../support/fuzz-state.js";
import { isTyped, linksOf, parseForms, successfulFields, textById, type HtmlForm } from "../support/html-forms.js";
import { useTestSignon } from "../support/signon.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";
import { webState } from "./web-state.js";

/**
 * The length limits of every form of the web interface, found rather than
 * listed: each caller (a visitor, a browser half signed in that owes its
 * 2-step code, a superadmin) walks the pages it can open from every page
 * without parameters, through links, GET forms and the development mailbox
 * (invitation and reset links); every POST form found has its typed fields
 * read with their `maxlength`. Each typed field must carry one, equal to its
 * route's schema limit, and a value one character over it, or far over it
 * (text from fast-check: emoji, combining marks, scripts beyond Latin), must
 * come back as the same form (400) with a message by the field naming the
 * limit, the other values kept, and nothing stored.
 */

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** fast-check runs per field: each posts one character over the limit, and far over it. */
const RUNS = Number(process.env["FORM_LIMIT_RUNS"] ?? 3);
const SEED = Number(process.env["FORM_LIMIT_SEED"] ?? 20260512);

const origin = ctx.config.publicUrl;

/** A registered route and the paths it answers. */
interface KnownRoute {
  readonly options: RouteOptions;
  readonly pattern: RegExp;
  readonly params: number;
}

function known(options: RouteOptions): KnownRoute {
  const url = options.url;
  const pattern = new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:\w+/g, "[^/]+")}$`);
  return { options, pattern, params: (url.match(/:\w+/g) ?? []).length };
}

const htmlRoutes = (method: string) => signon.routes.filter((route) => route.method === method && route.config?.errorFormat === "html").map(known);
const pages = htmlRoutes("GET");
const posts = htmlRoutes("POST");

/** The route that answers `path`: a route without parameters before one with, as the router chooses. */
function routeOf(routes: readonly KnownRoute[], path: string): KnownRoute | undefined {
  return routes.filter((route) => route.pattern.test(path)).sort((a, b) => a.params - b.params)[0];
}

/** The limit the route's body schema sets on a field. */
function schemaLimit(route: KnownRoute, field: string): number | undefined {
  const body = route.options.schema?.body as { properties?: Record<string, { maxLength?: number }> } | undefined;
  return body?.properties?.[field]?.maxLength;
}

interface Caller {
  readonly name: string;
  readonly browser: InjectBrowser;
  readonly seeds: readonly string[];
}

/** A POST form as a caller found it. */
interface FoundForm {
  readonly caller: Caller;
  readonly page: string;
  readonly form: HtmlForm;
  readonly route: KnownRoute;
}

/**
 * The callers, and one of each thing the pages are about: an organisation,
 * an application, a person, an API user with a token, an invitation and a
 * password reset waiting in the development mailbox, and a person with 2-step
 * verification signed in with their password only.
 */
async function scene(): Promise<Caller[]> {
  const organisation = await createTestOrganisation(ctx);
  const { application } = await createApp(ctx, { permissions: ["editor"] });
  const person = await createUser(ctx, { organisationId: organisation.id, permissions: { [application.name]: ["signin"] } });
  const apiUser = await createApiUser(ctx, { name: "Robot", email: `robot-${randomBytes(4).toString("hex")}@example.org` });
  const { browser: superadmin, uid } = await signedInAs(app, ctx, "superadmin");
  await issueApiUserToken(ctx, { user: apiUser, applicationId: application.id, permissions: [], expiresInDays: 30 }, uid);
  const invited = await superadmin.submit("/users/new", "/users/new", { name: "Ivy Invited", email: "ivy@example.org", role: "normal", organisation: organisation.id });
  expect(invited.statusCode).toBe(303);
  const visitor = new InjectBrowser(app);
  expect((await visitor.submit("/password-reset", "/password-reset", { email: person.email })).statusCode).toBe(303);
  await settleBackgroundWork(10_000);
  const owesCode = await createUser(ctx);
  await ctx.db.update(users).set({ otpEnabledAt: ctx.now() }).where(eq(users.uid, owesCode.uid));
  const halfSignedIn = new InjectBrowser(app);
  expect((await halfSignedIn.signIn("/sign-in", owesCode.email, defaultPassword)).headers.location).toMatch(/^\/sign-in\/two-step/);
  const everyPage = pages.filter((page) => page.params === 0).map((page) => page.options.url);
  return [
    { name: "a visitor", browser: visitor, seeds: everyPage },
    { name: "a browser owing its 2-step code", browser: halfSignedIn, seeds: ["/sign-in/two-step"] },
    { name: "a superadmin", browser: superadmin, seeds: everyPage },
  ];
}

/** Pages of one route opened at most this often (the users list links to every person). */
const visitsPerRoute = 3;

/** Walks the pages `caller` can open and returns the POST forms on them. */
async function formsSeenBy(caller: Caller): Promise<FoundForm[]> {
  const found: FoundForm[] = [];
  const queue = [...caller.seeds];
  const opened = new Set<string>();
  const visits = new Map<KnownRoute, number>();
  for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
    if (opened.has(url)) continue;
    opened.add(url);
    const page = routeOf(pages, url.split("?")[0] as string);
    if (page === undefined || (visits.get(page) ?? 0) >= visitsPerRoute) continue;
    visits.set(page, (visits.get(page) ?? 0) + 1);
    const response = await caller.browser.follow(await caller.browser.get(url));
    if (response.statusCode !== 200 || !String(response.headers["content-type"]).startsWith("text/html")) continue;
    for (const form of parseForms(response.body)) {
      const route = form.method === "post" ? routeOf(posts, form.action) : undefined;
      if (route !== undefined) found.push({ caller, page: url, form, route });
    }
    queue.push(...linksOf(response.body, origin));
  }
  return found;
}

/** Every POST form of the web interface, once per route and set of fields, with who sees it first. */
async function everyForm(): Promise<FoundForm[]> {
  const forms = new Map<string, FoundForm>();
  for (const caller of await scene()) {
    for (const found of await formsSeenBy(caller)) {
      const key = `${found.route.options.url} ${found.form.controls.map((field) => field.name).join(",")}`;
      if (!forms.has(key)) forms.set(key, found);
    }
  }
  return [...forms.values()];
}

/** Characters that break length counts: astral emoji, joiners, combining marks, scripts of several bytes, direction marks. */
const oddCharacter = fc.oneof(
  fc.constantFrom("😀", "👩‍👩‍👧", "🇫🇷", "e\u0301", "\u0301", "\u0345\u0300", "ﷺ", "𝔘", "\u202E", "\u200D", "\uFEFF", "ß", "ǅ", "\t", " "),
  fc.integer({ min: 0x20, max: 0xd7ff }).map((code) => String.fromCodePoint(code)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((code) => String.fromCodePoint(code)),
);
const oddText = fc.array(oddCharacter, { minLength: 1, maxLength: 40 }).map((pieces) => [...pieces.join("")]);

const bytesOf = (text: string) => encodeURIComponent(text).length;

/** A value of exactly `length` characters (code points): the odd text, then plain letters. */
function valueOf(odd: readonly string[], length: number): string {
  const start = odd.slice(0, length).join("");
  return start + "x".repeat(Math.max(0, length - Math.min(odd.length, length)));
}

/** What the other typed fields of a post hold: short values the page must show again. */
const kept = (name: string, limit: number) => `kept ${name}`.slice(0, limit);

function urlEncoded(fields: readonly [string, string][]): string {
  return fields.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join("&");
}

function multipart(fields: readonly [string, string][]): { payload: Buffer; contentType: string } {
  const boundary = `----form-limits-${randomBytes(8).toString("hex")}`;
  const parts = fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return { payload: Buffer.from(`${parts.join("")}--${boundary}--\r\n`, "utf8"), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function post(found: FoundForm, fields: readonly [string, string][]): Promise<LightMyRequestResponse> {
  const body = found.form.enctype === "multipart/form-data" ? multipart(fields) : { payload: urlEncoded(fields), contentType: "application/x-www-form-urlencoded" };
  return app.inject({
    method: "POST",
    url: found.form.action,
    headers: { cookie: found.caller.browser.cookieHeader, "content-type": body.contentType, accept: "text/html" },
    payload: body.payload,
  });
}

/** The largest body of a form's post, in bytes: the route's own limit if it sets one (pasted metadata), and the batch invitation form's parser takes four times a batch file. */
function bodyLimitOf(found: FoundForm): number {
  return found.route.options.bodyLimit ?? (found.form.enctype === "multipart/form-data" ? 4 * batchFileMaxBytes : bodyLimitBytes);
}

/** The typed fields of a form with their limits, failing on one without `maxlength`. */
function typedFields(found: FoundForm): { name: string; limit: number; password: boolean }[] {
  return found.form.controls.filter(isTyped).map((field) => {
    const limit = Number(field.maxlength);
    expect(Number.isInteger(limit) && limit > 0, `${found.form.action}: ${field.name} has no maxlength (on ${found.page}, as ${found.caller.name})`).toBe(true);
    return { name: field.name as string, limit, password: field.type === "password" };
  });
}

describe("the length limits of every form", { timeout: 300_000 }, () => {
  it("are each typed field's maxlength, equal to its route's schema limit, and shown again with a message when exceeded, storing nothing", async () => {
    const forms = await everyForm();
    const before = await webState(ctx);
    const auditFrom = await lastAuditEventId(ctx);
    const checked: string[] = [];

    for (const found of forms) {
      const fields = typedFields(found);
      if (fields.length === 0) continue;
      const where = `${found.form.action} (on ${found.page}, as ${found.caller.name})`;
      expect(found.route.options.config?.overLong, `${where}: a form with typed fields whose route has no config.overLong`).toBeDefined();
      for (const field of fields) expect(field.limit, `${where}: maxlength of ${field.name}`).toBe(schemaLimit(found.route, field.name));

      for (const field of fields) {
        // What the form sends besides the field: its hidden values as given, the other typed fields something to show again.
        const others = successfulFields(found.form)
          .filter(([name]) => name !== field.name)
          .map(([name, value]): [string, string] => {
            const typed = fields.find((candidate) => candidate.name === name);
            return typed === undefined ? [name, value] : [name, kept(name, typed.limit)];
          });
        const room = bodyLimitOf(found) - bytesOf(urlEncoded(others)) - bytesOf(field.name) - 400;
        const property = fc.asyncProperty(oddText, async (odd) => {
          const oddBytes = bytesOf(odd.join(""));
          const fits = odd.length + Math.max(0, room - oddBytes);
          expect(fits, `${where}: a value of ${field.name} one over its limit does not fit in a body`).toBeGreaterThan(field.limit);
          for (const length of [field.limit + 1, Math.min(Math.max(2 * field.limit, field.limit + 200), fits)]) {
            const value = valueOf(odd, length);
            const context = `${where}: ${field.name} of ${length} characters, starting ${JSON.stringify(value.slice(0, 40))}`;
            const response = await post(found, [...others, [field.name, value]]);
            expect(response.statusCode, `${context}\n${response.body.slice(0, 600)}`).toBe(400);
            const again = parseForms(response.body).find((form) => form.method === "post" && form.action === found.form.action && form.controls.some((one) => one.name === field.name));
            expect(again, `${context}: the form is not shown again\n${response.body.slice(0, 600)}`).toBeDefined();
            const shown = again!.controls.find((one) => one.name === field.name && isTyped(one))!;
            expect(shown.maxlength, context).toBe(String(field.limit));
            const messages = shown.describedBy.map((id) => textById(response.body, id) ?? "");
            expect(messages.some((message) => message.includes(`at most ${field.limit} `)), `${context}: no message naming the limit by the field (${JSON.stringify(messages)})`).toBe(true);
            for (const other of fields.filter((one) => one.name !== field.name && !one.password)) {
              const otherShown = again!.controls.find((one) => one.name === other.name && isTyped(one));
              expect(otherShown?.value, `${context}: ${other.name} is not kept`).toBe(kept(other.name, other.limit));
            }
          }
          // A NUL character is refused with the body, before any field is read: the page says so.
          const withNul = await post(found, [...others, [field.name, valueOf(["\u0000", ...odd], field.limit + 1)]]);
          expect(withNul.statusCode, `${where}: ${field.name} with a NUL character`).toBe(400);
          expect(withNul.body, `${where}: ${field.name} with a NUL character`).toContain("contains a NUL character");
        });
        await fc.assert(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
        expect(await webState(ctx), `${where}: ${field.name} over its limit changed stored data`).toEqual(before);
        checked.push(`${found.route.options.url} ${field.name}`);
      }
    }

    expect(await auditActionsAfter(ctx, auditFrom)).toEqual([]);
    // Every form route that answers over-long values was found, with each of its typed fields.
    const expected = posts.flatMap((route) => Object.keys(route.options.config?.overLong?.fields ?? {}).map((field) => `${route.options.url} ${field}`));
    expect([...new Set(checked)].sort()).toEqual([...new Set(expected)].sort());
  });
});

describe("a post with an over-long value and something else wrong", () => {
  const overLongAddress = `${"a".repeat(300)}@example.org`;

  it("keeps the usual refusal: an unknown field or a hidden value over its limit is a bad request, a missing CSRF token a form expired", async () => {
    const visitor = new InjectBrowser(app);
    const heading = (response: LightMyRequestResponse) => [response.statusCode, /<h1>([^<]*)<\/h1>/.exec(response.body)?.[1]];
    expect(heading(await visitor.submit("/password-reset", "/password-reset", { email: overLongAddress, extra: "x" }))).toEqual([400, "Bad request"]);
    expect(heading(await visitor.submit("/sign-in", "/sign-in", { email: overLongAddress, password: "x", return_to: `/${"r".repeat(5000)}` }))).toEqual([400, "Bad request"]);
    expect(heading(await visitor.postForm("/password-reset", { email: overLongAddress }))).toEqual([403, "Form expired"]);
  });

  it("checks who is asking first: a visitor is sent to sign in, a normal user refused, as for any post to the form", async () => {
    const person = await createUser(ctx);
    const visitor = new InjectBrowser(app);
    const csrf = /name="_csrf" value="([^"]*)"/.exec((await visitor.get("/sign-in")).body)?.[1] ?? "";
    const anonymous = await visitor.postForm(`/users/${person.uid}`, { _csrf: csrf, name: "n".repeat(201), email: person.email, role: "normal" });
    expect([anonymous.statusCode, anonymous.headers.location]).toEqual([303, "/sign-in?return_to=%2F"]);
    const { browser: normal } = await signedInAs(app, ctx, "normal");
    const refused = await normal.submit("/account", `/users/${person.uid}`, { name: "n".repeat(201), email: person.email, role: "normal" });
    expect(refused.statusCode).toBe(403);
  });

  it("refuses to start with a config.overLong for a field without a limit, or for another schema than the route's", async () => {
    const Body = Type.Object({ name: Type.String({ maxLength: 10 }), note: Type.String() });
    const reshow = async () => undefined;
    const routeWith = async (overLong: ReturnType<typeof overLongAnswer>, body: TObject = Body) => {
      const bare = Fastify();
      registerOverLongAnswers(bare);
      bare.post("/form", { config: { overLong }, schema: { body } }, async () => "");
      await bare.ready();
      await bare.close();
    };
    await expect(routeWith(overLongAnswer(Body, { name: "a name" }, reshow))).resolves.toBeUndefined();
    await expect(routeWith(overLongAnswer(Body, { note: "a note" }, reshow))).rejects.toThrow("POST /form: config.overLong names note, which has no maxLength in the body schema");
    await expect(routeWith(overLongAnswer(Body, { name: "a name" }, reshow), Type.Object({ name: Type.String({ maxLength: 10 }) }))).rejects.toThrow(
      "POST /form: config.overLong is for another body schema than the route's",
    );
  });
});
