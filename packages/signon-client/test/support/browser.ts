import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import type { StandInSignon } from "../../src/testing/stand-in-signon.js";

/** A browser of the client app: keeps its cookies, follows nothing by itself. */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(private readonly app: FastifyInstance) {}

  async get(url: string): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ method: "GET", url, headers: this.#cookieHeader() });
    for (const cookie of response.cookies) {
      const expired = cookie.expires !== undefined && cookie.expires.getTime() <= Date.now();
      if (cookie.value === "" || expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  /**
   * Goes through sign-in from `path`: the app sends the browser to Sign-on, the
   * stand-in redirects back with a code, the callback signs in. Returns the
   * callback's response.
   */
  async signIn(signon: StandInSignon, uid: string, path = "/"): Promise<LightMyRequestResponse> {
    signon.signedInUid = uid;
    const toSignIn = await this.get(path);
    expect(toSignIn.statusCode).toBe(302);
    const start = await this.get(location(toSignIn));
    expect(start.statusCode).toBe(302);
    const callbackUrl = await authorize(location(start));
    return this.get(callbackUrl);
  }

  #cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
  }
}

/** Asks the authorization server at `authorizationUrl` and returns the local path it redirects back to. */
export async function authorize(authorizationUrl: string): Promise<string> {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  expect(response.status).toBe(302);
  const back = new URL(response.headers.get("location") ?? "");
  return `${back.pathname}${back.search}`;
}

/** The Location header of a redirect. */
export function location(response: LightMyRequestResponse): string {
  const value = response.headers.location;
  if (typeof value !== "string") throw new Error(`expected a redirect, got ${response.statusCode}`);
  return value;
}
