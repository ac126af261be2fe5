// 2-step verification for the mixed-version checks: set up with an authenticator key read from the set-up page,
// codes computed from it (RFC 6238: HMAC-SHA1, 30 s steps, 6 digits), and a sign-in that asks to remember the
// browser, whose cookie is then taken alone to another instance.
import { Secret, TOTP } from "otpauth";
import { csrfTokenOf, PASSWORD, type RequestLog } from "@tessera/test-support/drill";

/** A person with 2-step verification on: their address, key, and the last time step a code of theirs was used in. */
export interface TwoStepPerson {
  email: string;
  secret: string;
  lastStep: number;
}

const periodSeconds = 30;

/** The authenticator app's code for a time step (RFC 6238: HMAC-SHA1, 30 s steps, 6 digits), as otpauth computes it. */
function totp(secret: string, step: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: step * 30_000 });
}

/** A code of a time step the person has not used yet (waiting for the next step when the current one is used). */
async function freshCode(person: TwoStepPerson): Promise<string> {
  for (;;) {
    const step = Math.floor(Date.now() / 1000 / periodSeconds);
    if (step > person.lastStep) {
      person.lastStep = step;
      return totp(person.secret, step);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A browser of its own: its cookies by name, every request recorded in the log. */
class Browser {
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly log: RequestLog,
    private readonly service: string,
  ) {}

  async send(kind: string, url: string, form?: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
    const headers: Record<string, string> = { accept: "text/html" };
    if (this.cookies.size > 0) headers["cookie"] = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const sentAt = Date.now();
    let response: Response;
    let body: string;
    try {
      response = await fetch(url, { method: form ? "POST" : "GET", headers, body: form ? new URLSearchParams(form).toString() : null, redirect: "manual" });
      body = await response.text();
    } catch (error) {
      this.log.outcomes.push({ kind, service: this.service, status: 0, retryAfter: null, detail: (error as Error).message, sentAt, at: Date.now() });
      return { status: 0, location: null, body: "" };
    }
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const name = pair.slice(0, pair.indexOf("=")).trim();
      const value = pair.slice(pair.indexOf("=") + 1).trim();
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    this.log.outcomes.push({ kind, service: this.service, status: response.status, retryAfter: response.headers.get("retry-after"), detail: response.status >= 400 ? body.slice(0, 300) : null, sentAt, at: Date.now() });
    return { status: response.status, location: response.headers.get("location"), body };
  }

  /** Fills in the sign-in form at `origin`; the answer to the post. */
  async signIn(origin: string, email: string): Promise<{ status: number; location: string | null }> {
    const form = await this.send("2-step GET /sign-in", `${origin}/sign-in`);
    return this.send("2-step POST /sign-in", `${origin}/sign-in`, { _csrf: csrfTokenOf(form.body) ?? "", return_to: "/", email, password: PASSWORD });
  }
}

/** Signs `email` in at `origin` and turns 2-step verification on with the key the set-up page shows. */
export async function setUpTwoStep(origin: string, email: string, log: RequestLog): Promise<TwoStepPerson> {
  const browser = new Browser(log, "2-step set-up");
  const signedIn = await browser.signIn(origin, email);
  if (signedIn.status !== 303) throw new Error(`${email} could not sign in to set up 2-step verification (${signedIn.status})`);
  const page = await browser.send("2-step GET /account/two-step", `${origin}/account/two-step`);
  const secret = /id="secret">([^<]+)</.exec(page.body)?.[1]?.replace(/\s/g, "");
  if (secret === undefined) throw new Error(`no key on the 2-step set-up page (${page.status})`);
  const person = { email, secret, lastStep: 0 };
  const done = await browser.send("2-step POST /account/two-step", `${origin}/account/two-step`, { _csrf: csrfTokenOf(page.body) ?? "", code: await freshCode(person) });
  if (done.status !== 303) throw new Error(`2-step set-up answered ${done.status}: ${done.body.slice(0, 300)}`);
  return person;
}

/**
 * The remembered-browser cookie from one version works at the other: `person` signs in at `from` with a code,
 * asking to remember the browser; a new browser holding that cookie alone signs in at `to` with the password and is
 * not asked for a code. Returns the problems.
 */
export async function rememberedAcross(person: TwoStepPerson, from: { name: string; url: string }, to: { name: string; url: string }, log: RequestLog): Promise<string[]> {
  const label = `remembered browser ${from.name} → ${to.name}`;
  const first = new Browser(log, from.name);
  const signedIn = await first.signIn(from.url, person.email);
  const codeAt = new URL(signedIn.location ?? "/", from.url);
  if (signedIn.status !== 303 || codeAt.pathname !== "/sign-in/two-step") return [`${label}: the sign-in at ${from.name} answered ${signedIn.status} to ${signedIn.location}, not the code form`];
  const codeForm = await first.send("2-step GET /sign-in/two-step", `${from.url}${codeAt.pathname}${codeAt.search}`);
  const verified = await first.send("2-step POST /sign-in/two-step", `${from.url}/sign-in/two-step`, {
    _csrf: csrfTokenOf(codeForm.body) ?? "",
    return_to: "/",
    code: await freshCode(person),
    remember: "yes",
  });
  if (verified.status !== 303) return [`${label}: the code at ${from.name} answered ${verified.status}: ${verified.body.slice(0, 200)}`];
  const remembered = [...first.cookies].find(([name]) => name.endsWith("signon_remembered"));
  if (remembered === undefined) return [`${label}: ${from.name} set no remembered-browser cookie`];
  const second = new Browser(log, to.name);
  second.cookies.set(remembered[0], remembered[1]);
  const again = await second.signIn(to.url, person.email);
  if (again.status !== 303 || new URL(again.location ?? "/", to.url).pathname === "/sign-in/two-step") {
    return [`${label}: with ${from.name}'s remembered-browser cookie, the sign-in at ${to.name} answered ${again.status} to ${again.location}`];
  }
  return [];
}
