import { systemClock, type Clock } from "./clock.js";
import type { Fetch } from "./http/send.js";
import type { SessionStore } from "./storage/session-store.js";
import type { UserStore } from "./storage/user-store.js";
import type { SignonUserDetails } from "./user.js";

/** Where Sign-on serves the endpoints this client calls (paths relative to `signonUrl`). */
export interface SignonPaths {
  /** Default `/oauth/authorize`. */
  authorize: string;
  /** Default `/token`. */
  token: string;
  /** Default `/user.json`. */
  userInfo: string;
  /**
   * Where the browser goes after signing out here; default `/`, Sign-on's home
   * page with its sign-out button (Sign-on signs out by a CSRF-protected POST,
   * which a redirect cannot make). gds-sso's Sign-on used `/users/sign_out`.
   */
  signOut: string;
}

/**
 * A stand-in person for developing an application without Sign-on, as
 * gds-sso's `GDS_SSO_STRATEGY=mock`: every request is signed in as them.
 */
export interface SignonMockUser {
  uid: string;
  name: string;
  email: string;
  /** This application's permissions of the stand-in; `signin` is added, as every user Sign-on lets in holds it. */
  permissions: readonly string[];
  organisationSlug?: string | null | undefined;
  organisationContentId?: string | null | undefined;
}

/** How to reach Sign-on: all that checking bearer tokens needs. */
export interface BearerVerifierOptions {
  /** Base URL of Sign-on, e.g. `https://signon.example.org`. */
  signonUrl: string;
  /**
   * This application's `client_id` in Sign-on. Every `/user.json` check sends it, so Sign-on
   * accepts only tokens issued to this application: a token of another application is refused
   * (401), never taken with that application's permissions.
   */
  clientId: string;
  fetch?: Fetch;
  clock?: Clock;
  paths?: Partial<SignonPaths>;
  /** Timeout of each call to Sign-on; default 10 000 ms. */
  requestTimeoutMs?: number;
  /** How long a bearer-token check is remembered; default and maximum 60. */
  bearerCacheTtlSeconds?: number;
  /** How many bearer-token checks are remembered; default 10 000. */
  bearerCacheMaxEntries?: number;
  /**
   * Stale-if-error: how long past `bearerCacheTtlSeconds` a user Sign-on
   * returned for a token is still given while Sign-on cannot be reached or
   * answers 5xx (a failover of its database); default 0 (never), at most
   * {@link MAX_BEARER_STALE_IF_ERROR_SECONDS}. A fresh answer always replaces
   * it, refusals are never given stale, and `forgetUser` drops it.
   */
  bearerStaleIfErrorSeconds?: number;
  /**
   * Development without Sign-on: every request is signed in as this person,
   * for the browser guards and the bearer-token guards alike, and Sign-on is
   * never called. Refused when `nodeEnv` is `production`.
   */
  mockUser?: SignonMockUser | undefined;
  /** The environment `mockUser` is checked against; default `process.env.NODE_ENV`. */
  nodeEnv?: string | undefined;
}

/** Everything the Sign-on client needs; see `resolveSignonClientConfig` for the defaults. */
export interface SignonClientOptions extends BearerVerifierOptions {
  clientSecret: string;
  /** This application's callback URL as registered in Sign-on, e.g. `https://app.example.org/auth/gds/callback`. */
  redirectUri: string;
  userStore: UserStore;
  sessionStore: SessionStore;
  /** How long a signed-in session lasts without sign-in; default 20 hours. */
  sessionTtlSeconds?: number;
  /** How long a started sign-in may take; default 10 minutes (the code lifetime). */
  signInTtlSeconds?: number;
  /** Refresh the access token this long before it expires (at most half its lifetime); default 300. */
  refreshMarginSeconds?: number;
}

/** `BearerVerifierOptions` with every default filled in and checked. */
export interface BearerVerifierConfig {
  signonUrl: string;
  clientId: string;
  fetch: Fetch;
  clock: Clock;
  paths: SignonPaths;
  requestTimeoutMs: number;
  bearerCacheTtlSeconds: number;
  bearerCacheMaxEntries: number;
  bearerStaleIfErrorSeconds: number;
  /** The stand-in every request is signed in as, or `null`: Sign-on decides. */
  mockUser: SignonUserDetails | null;
}

/** `SignonClientOptions` with every default filled in and checked. */
export interface SignonClientConfig extends BearerVerifierConfig {
  clientSecret: string;
  redirectUri: string;
  userStore: UserStore;
  sessionStore: SessionStore;
  sessionTtlSeconds: number;
  signInTtlSeconds: number;
  refreshMarginSeconds: number;
}

/** The longest a bearer-token check may be remembered. */
export const MAX_BEARER_CACHE_TTL_SECONDS = 60;

/** The longest a user may be given stale past a bearer-token check's lifetime while Sign-on cannot answer. */
export const MAX_BEARER_STALE_IF_ERROR_SECONDS = 3600;

/**
 * Checks the options of a bearer-token verifier and fills in defaults. Throws
 * an `Error` naming the option when one is unusable.
 */
export function resolveBearerVerifierConfig(options: BearerVerifierOptions): BearerVerifierConfig {
  requireUrl("signonUrl", options.signonUrl);
  requireText("clientId", options.clientId);
  const bearerCacheTtlSeconds = options.bearerCacheTtlSeconds ?? MAX_BEARER_CACHE_TTL_SECONDS;
  if (bearerCacheTtlSeconds > MAX_BEARER_CACHE_TTL_SECONDS) {
    throw new Error(`bearerCacheTtlSeconds must be at most ${MAX_BEARER_CACHE_TTL_SECONDS}, got ${bearerCacheTtlSeconds}`);
  }
  const bearerStaleIfErrorSeconds = options.bearerStaleIfErrorSeconds ?? 0;
  if (bearerStaleIfErrorSeconds > MAX_BEARER_STALE_IF_ERROR_SECONDS) {
    throw new Error(`bearerStaleIfErrorSeconds must be at most ${MAX_BEARER_STALE_IF_ERROR_SECONDS}, got ${bearerStaleIfErrorSeconds}`);
  }
  const config: BearerVerifierConfig = {
    signonUrl: options.signonUrl.replace(/\/+$/, ""),
    clientId: options.clientId,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    clock: options.clock ?? systemClock,
    paths: {
      authorize: "/oauth/authorize",
      token: "/token",
      userInfo: "/user.json",
      signOut: "/",
      ...options.paths,
    },
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    bearerCacheTtlSeconds,
    bearerCacheMaxEntries: options.bearerCacheMaxEntries ?? 10_000,
    bearerStaleIfErrorSeconds,
    mockUser: resolveMockUser(options.mockUser, options.nodeEnv ?? process.env["NODE_ENV"]),
  };
  requireNonNegative(config, ["requestTimeoutMs", "bearerCacheTtlSeconds", "bearerCacheMaxEntries", "bearerStaleIfErrorSeconds"]);
  return config;
}

/**
 * Checks the options and fills in defaults. Throws an `Error` naming the
 * option when one is unusable, so a misconfigured application stops at start-up.
 */
export function resolveSignonClientConfig(options: SignonClientOptions): SignonClientConfig {
  const connection = resolveBearerVerifierConfig(options);
  requireUrl("redirectUri", options.redirectUri);
  requireText("clientSecret", options.clientSecret);
  const config: SignonClientConfig = {
    ...connection,
    clientSecret: options.clientSecret,
    redirectUri: options.redirectUri,
    userStore: options.userStore,
    sessionStore: options.sessionStore,
    sessionTtlSeconds: options.sessionTtlSeconds ?? 20 * 60 * 60,
    signInTtlSeconds: options.signInTtlSeconds ?? 10 * 60,
    refreshMarginSeconds: options.refreshMarginSeconds ?? 300,
  };
  requireNonNegative(config, ["sessionTtlSeconds", "signInTtlSeconds", "refreshMarginSeconds"]);
  return config;
}

/**
 * Checks the stand-in of mock mode. Throws naming `mockUser` when it is
 * unusable, or given at all where `NODE_ENV` is `production`: a mock signs
 * anyone in as anyone.
 */
function resolveMockUser(mock: SignonMockUser | undefined, nodeEnv: string | undefined): SignonUserDetails | null {
  if (mock === undefined) return null;
  if (nodeEnv === "production") {
    throw new Error("mockUser must not be set when NODE_ENV is production: it signs every request in without Sign-on");
  }
  for (const field of ["uid", "name", "email"] as const) {
    if (typeof mock[field] !== "string" || mock[field] === "") throw new Error(`mockUser.${field} is required`);
  }
  if (!Array.isArray(mock.permissions) || mock.permissions.some((permission) => typeof permission !== "string" || permission === "")) {
    throw new Error("mockUser.permissions must be a list of permission names");
  }
  return {
    uid: mock.uid,
    name: mock.name,
    email: mock.email,
    permissions: [...new Set(["signin", ...mock.permissions])].sort(),
    organisationSlug: mock.organisationSlug ?? null,
    organisationContentId: mock.organisationContentId ?? null,
    disabled: false,
  };
}

function requireNonNegative<T extends object>(config: T, names: readonly (keyof T & string)[]): void {
  for (const name of names) {
    const value = config[name];
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw new Error(`${name} must be a number of at least 0, got ${String(value)}`);
    }
  }
}

function requireText(name: string, value: string): void {
  if (typeof value !== "string" || value.length === 0) throw new Error(`${name} is required`);
}

function requireUrl(name: string, value: string): void {
  requireText(name, value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} must be an absolute URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
}
