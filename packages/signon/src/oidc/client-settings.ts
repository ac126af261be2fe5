import { eq } from "drizzle-orm";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { applications } from "../db/schema.js";
import { redirectUriProblem } from "../oauth/redirect-uri.js";
import type { Application } from "../repositories/applications.js";
import { scopesSupported } from "./discovery.js";
import { signingAlgorithms } from "./signing-keys.js";

/** An application's OpenID Connect registration. */
export interface OpenIdClientSettings {
  /** Scopes it may ask for; empty: not an OpenID Connect client. `openid` is added when any is given. */
  scopes: readonly string[];
  /** `ES256` (default) or `RS256`. */
  idTokenAlg: string;
  postLogoutRedirectUris: readonly string[];
  backchannelLogoutUri: string | null;
}

/** A refused OpenID Connect registration, with a message for the person or operator. */
export class OpenIdSettingsError extends Error {}

/** The application's current OpenID Connect registration. */
export function openIdSettingsOf(application: Application): OpenIdClientSettings {
  return {
    scopes: application.oidcScopes,
    idTokenAlg: application.idTokenSignedResponseAlg,
    postLogoutRedirectUris: application.postLogoutRedirectUris,
    backchannelLogoutUri: application.backchannelLogoutUri,
  };
}

/**
 * Checks settings: known scopes (`openid` added when there are any), a
 * supported algorithm, and logout URIs that are absolute `https` URIs without
 * a fragment (`http` on a loopback host in development), like redirect URIs.
 *
 * @throws OpenIdSettingsError naming the first problem.
 */
export function checkOpenIdSettings(ctx: SignonContext, settings: OpenIdClientSettings): OpenIdClientSettings {
  const unknown = settings.scopes.find((scope) => !(scopesSupported as readonly string[]).includes(scope));
  if (unknown !== undefined) throw new OpenIdSettingsError(`Unknown scope ${JSON.stringify(unknown)}: the scopes are ${scopesSupported.join(", ")}`);
  const scopes = settings.scopes.length === 0 ? [] : scopesSupported.filter((scope) => scope === "openid" || settings.scopes.includes(scope));
  if (!(signingAlgorithms as readonly string[]).includes(settings.idTokenAlg)) {
    throw new OpenIdSettingsError(`The ID token algorithm is ${signingAlgorithms.join(" or ")}`);
  }
  const allowLoopbackHttp = ctx.config.mode === "development";
  const postLogoutRedirectUris = [...new Set(settings.postLogoutRedirectUris)];
  if (postLogoutRedirectUris.length > 20) throw new OpenIdSettingsError("At most 20 post-logout redirect URIs");
  for (const uri of postLogoutRedirectUris) {
    if (uri.length > 2048) throw new OpenIdSettingsError("A post-logout redirect URI is longer than 2048 characters");
    const problem = redirectUriProblem(uri, { allowLoopbackHttp });
    if (problem) throw new OpenIdSettingsError(`Post-logout redirect URI ${uri} ${problem}`);
  }
  const backchannel = settings.backchannelLogoutUri;
  if (backchannel !== null) {
    if (backchannel.length > 2048) throw new OpenIdSettingsError("The back-channel logout URI is longer than 2048 characters");
    const problem = redirectUriProblem(backchannel, { allowLoopbackHttp });
    if (problem) throw new OpenIdSettingsError(`Back-channel logout URI ${backchannel} ${problem}`);
  }
  return { scopes, idTokenAlg: settings.idTokenAlg, postLogoutRedirectUris, backchannelLogoutUri: backchannel };
}

/** Stores an application's OpenID Connect registration (checked first) and records the change. Returns the application as stored. */
export async function setOpenIdSettings(
  ctx: SignonContext,
  application: Application,
  settings: OpenIdClientSettings,
  by: { uid: string | null; origin: RequestOrigin | null },
): Promise<Application> {
  const checked = checkOpenIdSettings(ctx, settings);
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(applications)
      .set({
        oidcScopes: [...checked.scopes],
        idTokenSignedResponseAlg: checked.idTokenAlg,
        postLogoutRedirectUris: [...checked.postLogoutRedirectUris],
        backchannelLogoutUri: checked.backchannelLogoutUri,
      })
      .where(eq(applications.id, application.id))
      .returning();
    if (!updated) throw new OpenIdSettingsError(`No application is named ${application.name}`);
    await audit(tx, {
      action: "application_updated",
      at: now,
      actorUid: by.uid,
      origin: by.origin,
      applicationId: application.id,
      details: { changed: ["openid_connect"], oidc_scopes: checked.scopes, id_token_signed_response_alg: checked.idTokenAlg },
    });
    return updated;
  });
}
