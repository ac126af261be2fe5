import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import type { SignonContext } from "../context.js";
import { findApplicationByClientId, type Application } from "../repositories/applications.js";
import { signingAlgorithms, publishedKeys } from "./signing-keys.js";

/** The parameters of an RP-initiated logout request. */
export interface EndSessionParameters {
  idTokenHint?: string | undefined;
  clientId?: string | undefined;
  postLogoutRedirectUri?: string | undefined;
  state?: string | undefined;
}

/** A checked logout request: the application it came from (if known), whose user the hint names, and where to go after. */
export interface EndSessionRequest {
  application: Application | null;
  /** The `sub` of a valid `id_token_hint`. */
  hintSubject: string | null;
  /** The registered `post_logout_redirect_uri` to send the browser to, `state` added; `null`: Sign-on's own page. */
  redirectUri: string | null;
  state: string | null;
}

/** Why a logout request is refused: shown on Sign-on's own page (the redirect URI cannot be trusted). */
export class EndSessionError extends Error {}

/**
 * Checks an RP-initiated logout request. An `id_token_hint` must be an ID
 * token this server signed with a key it still publishes; it may have
 * expired (the spec asks providers to accept those) but not longer ago than
 * a session can last. `client_id`, when sent too, must be its audience. A
 * `post_logout_redirect_uri` must be one the application registered, exactly,
 * and needs the application to be known (by the hint or `client_id`).
 *
 * @see https://openid.net/specs/openid-connect-rpinitiated-1_0.html#RPLogout
 * @see https://openid.net/specs/openid-connect-rpinitiated-1_0.html#ValidationAndErrorHandling
 */
export async function checkEndSessionRequest(ctx: SignonContext, parameters: EndSessionParameters): Promise<EndSessionRequest> {
  let hint: JWTPayload | null = null;
  if (parameters.idTokenHint !== undefined && parameters.idTokenHint !== "") hint = await verifyIdTokenHint(ctx, parameters.idTokenHint);
  const hintAudience = hint === null ? null : Array.isArray(hint.aud) ? (hint.aud.length === 1 ? hint.aud[0] : null) : (hint.aud ?? null);
  if (hint !== null && hintAudience === null) throw new EndSessionError("The id_token_hint does not name one application.");
  const clientId = parameters.clientId === undefined || parameters.clientId === "" ? null : parameters.clientId;
  if (clientId !== null && hintAudience !== null && clientId !== hintAudience) throw new EndSessionError("client_id is not the application the id_token_hint was issued to.");
  const applicationClientId = hintAudience ?? clientId;
  const application = applicationClientId === null ? null : await findApplicationByClientId(ctx.db, applicationClientId);
  if (applicationClientId !== null && (!application || application.retired)) throw new EndSessionError("The application is not known.");

  let redirectUri: string | null = null;
  const requested = parameters.postLogoutRedirectUri;
  if (requested !== undefined && requested !== "") {
    if (!application) throw new EndSessionError("A post_logout_redirect_uri needs the application named, by id_token_hint or client_id.");
    if (!application.postLogoutRedirectUris.includes(requested)) {
      throw new EndSessionError(`The post_logout_redirect_uri is not registered for ${application.name}.`);
    }
    redirectUri = requested;
  }
  return {
    application,
    hintSubject: typeof hint?.sub === "string" ? hint.sub : null,
    redirectUri,
    state: parameters.state === undefined || parameters.state === "" ? null : parameters.state,
  };
}

async function verifyIdTokenHint(ctx: SignonContext, token: string): Promise<JWTPayload> {
  const published = await publishedKeys(ctx);
  const now = ctx.now();
  try {
    const keys = createLocalJWKSet({ keys: published });
    const { payload } = await jwtVerify(token, keys, {
      issuer: ctx.config.publicUrl,
      algorithms: [...signingAlgorithms],
      currentDate: now,
      // Expired hints are accepted, up to the longest a session lasts after them.
      clockTolerance: ctx.config.sessionMaxSeconds,
    });
    return payload;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw new EndSessionError("The id_token_hint expired too long ago.");
    if (error instanceof joseErrors.JWKSNoMatchingKey) throw new EndSessionError("The id_token_hint was not signed with a key of this server.");
    if (error instanceof joseErrors.JOSEError) throw new EndSessionError("The id_token_hint is not a valid ID token of this server.");
    throw error;
  }
}
