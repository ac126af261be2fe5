export { SignonClient } from "./signon-client.js";
export { resolveSignonClientConfig, resolveBearerVerifierConfig, MAX_BEARER_CACHE_TTL_SECONDS, MAX_BEARER_STALE_IF_ERROR_SECONDS } from "./config.js";
export type {
  SignonClientOptions,
  SignonClientConfig,
  SignonPaths,
  BearerVerifierOptions,
  BearerVerifierConfig,
  SignonMockUser,
} from "./config.js";
export { systemClock, type Clock } from "./clock.js";
export type { Fetch } from "./http/send.js";
export { SignonRefusedError, SignonUnavailableError, SignInRejectedError, StoreUnavailableError } from "./errors.js";
export { SignonUserJson, SignonUserEnvelope, userDetailsFromJson } from "./user.js";
export type { SignonUser, SignonUserDetails } from "./user.js";
export { hasPermission, hasAnyPermission, hasAllPermissions, type HasPermissions } from "./permissions.js";
export type { UserStore } from "./storage/user-store.js";
export type { SessionStore, SessionRecord, SessionTokens, PendingSignIn } from "./storage/session-store.js";
export { MemoryUserStore } from "./storage/memory-user-store.js";
export { MemorySessionStore } from "./storage/memory-session-store.js";
export { BearerTokenVerifier, bearerTokenFromHeader, createBearerTokenVerifier, MAX_BEARER_TOKEN_LENGTH } from "./bearer/bearer-token-verifier.js";
export { codeChallengeS256, createCodeVerifier } from "./oauth/pkce.js";
export { safeReturnPath } from "./sign-in/start-sign-in.js";
export type { SignedInSession, WarningLogger } from "./sessions/resolve-session.js";
export type { CallbackParameters, CompletedSignIn } from "./sign-in/complete-sign-in.js";
export type { StartedSignIn } from "./sign-in/start-sign-in.js";
