// Sign-on's sign-in as a browser goes through it, with 2-step verification: the set-up with the key its page shows,
// and later sign-ins with a code computed from that key (RFC 6238: HMAC-SHA1, 30 s steps, 6 digits). Sign-on seals
// the key with its secret key, so a sign-in with a code proves that the secret key is the one the key was sealed with.
import { Secret, TOTP } from "otpauth";
import { CookieJar } from "@tessera/test-support";

/** An authenticator app: the key, and the last time step whose code was used (Sign-on takes each step's code once). */
export interface Authenticator {
  secret: string;
  lastStep: number;
}

/** A browser: its cookies, and the answer to each request without following redirects. */
export class Browser {
  readonly #jar = new CookieJar();

  constructor(private readonly origin: string) {}

  async send(path: string, form?: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
    const headers: Record<string, string> = { accept: "text/html" };
    const cookie = this.#jar.header();
    if (cookie !== null) headers["cookie"] = cookie;
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await fetch(`${this.origin}${path}`, { method: form ? "POST" : "GET", headers, body: form ? new URLSearchParams(form).toString() : null, redirect: "manual" });
    this.#jar.take(response);
    return { status: response.status, location: response.headers.get("location"), body: await response.text() };
  }

  /** Fills in a form: GET `path` for its CSRF token, then POST `fields` with it. */
  async submit(path: string, fields: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
    const page = await this.send(path);
    const csrf = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1];
    if (csrf === undefined) throw new Error(`no form at ${path} (${page.status}): ${page.body.slice(0, 300)}`);
    return this.send(path.split("?")[0] as string, { _csrf: csrf.replace(/&amp;/g, "&"), ...fields });
  }
}

/** The authenticator app's code for a time step (RFC 6238: HMAC-SHA1, 30 s steps, 6 digits), as otpauth computes it. */
function totp(secret: string, step: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: step * 30_000 });
}

/** A code Sign-on takes now: the current step's, or the next step's (also accepted) when the current one was used. */
function nextCode(app: Authenticator): string {
  app.lastStep = Math.max(app.lastStep + 1, Math.floor(Date.now() / 30_000));
  return totp(app.secret, app.lastStep);
}

/** Signs in with the password (at `/sign-in`); the answer, a redirect to where the sign-in goes on. */
export function signIn(browser: Browser, email: string, password: string): Promise<{ status: number; location: string | null }> {
  return browser.submit("/sign-in", { return_to: "/", email, password });
}

/** Signs a person in whose first sign-in must set up 2-step verification, and sets it up: their authenticator. */
export async function setUpTwoStep(origin: string, email: string, password: string): Promise<Authenticator> {
  const browser = new Browser(origin);
  const signedIn = await signIn(browser, email, password);
  if (signedIn.status !== 303 || !signedIn.location?.startsWith("/account/two-step")) throw new Error(`the sign-in answered ${signedIn.status} to ${signedIn.location}`);
  const page = await browser.send(signedIn.location);
  const secret = /id="secret">([^<]+)</.exec(page.body)?.[1]?.replace(/\s/g, "");
  if (secret === undefined) throw new Error(`no key on the 2-step set-up page (${page.status})`);
  const app = { secret, lastStep: 0 };
  const done = await browser.submit(signedIn.location, { code: nextCode(app) });
  if (done.status !== 303) throw new Error(`the 2-step set-up answered ${done.status}: ${done.body.slice(0, 300)}`);
  return app;
}

/** Signs in with the password and a code; the answer to the code, and the page it goes on to. */
export async function signInWithCode(origin: string, email: string, password: string, app: Authenticator): Promise<{ code: { status: number; location: string | null }; page: number }> {
  const browser = new Browser(origin);
  const signedIn = await signIn(browser, email, password);
  if (signedIn.status !== 303 || !signedIn.location?.startsWith("/sign-in/two-step")) throw new Error(`the sign-in answered ${signedIn.status} to ${signedIn.location}`);
  const code = await browser.submit(signedIn.location, { return_to: "/", code: nextCode(app) });
  const page = code.location === null ? 0 : (await browser.send(code.location)).status;
  return { code: { status: code.status, location: code.location }, page };
}
