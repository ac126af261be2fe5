import type { SignonConfig } from "../../config.js";

/** What the browser and the authenticator check a passkey against: this service's origin and RP ID. */
export interface RelyingParty {
  /** The name authenticators show next to the passkey. */
  name: string;
  /** The RP ID: the host of the public URL (no port), so a passkey works on that host only. */
  id: string;
  /** The exact origin responses must come from: scheme, host and port of the public URL. */
  origin: string;
}

/**
 * The relying party, from the configured public URL of Sign-on
 * (`SIGNON_PUBLIC_URL`): the origin that pages are served from, and its host
 * as RP ID.
 *
 * @see https://www.w3.org/TR/webauthn-3/#rp-id
 */
export function relyingParty(config: Pick<SignonConfig, "publicUrl">): RelyingParty {
  const url = new URL(config.publicUrl);
  return { name: "Tessera Sign-on", id: url.hostname, origin: url.origin };
}

/** How long a ceremony may take: the browser's timeout, and the life of its challenge on the server. */
export const ceremonySeconds = 300;
