import { randomUUID } from "node:crypto";
import { generateRegistrationOptions, verifyRegistrationResponse, type PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { audit } from "../../audit.js";
import type { RequestOrigin, SignonContext } from "../../context.js";
import { insertPasskey, insertPasskeyChallenge, listPasskeysOfUser, takePasskeyChallenge } from "../../repositories/passkeys.js";
import type { User } from "../../repositories/users.js";
import { parseRegistrationResponse } from "./browser-response.js";
import { ceremonySeconds, relyingParty } from "./relying-party.js";

/** Most passkeys one person may register. */
export const maxPasskeysPerUser = 20;
/** Longest name of a passkey. */
export const passkeyNameMaxLength = 100;

/** The WebAuthn user handle of a person: the 16 bytes of their uid, which carries nothing personal. */
export function userHandleOf(uid: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(uid.replace(/-/g, ""), "hex"));
}

/** The uid a user handle (base64url) stands for, or `null` when it is not one of ours. */
export function uidOfUserHandle(userHandle: string | undefined): string | null {
  if (userHandle === undefined) return null;
  const hex = Buffer.from(userHandle, "base64url").toString("hex");
  if (hex.length !== 32) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Options for `navigator.credentials.create()`: a new challenge, stored for
 * this person and session (single use, `ceremonySeconds`), the person's
 * passkeys excluded so that one authenticator is not registered twice, a
 * discoverable credential preferred (it also signs in without a password)
 * and user verification preferred. Attestation is not asked for.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-registering-a-new-credential
 */
export async function beginPasskeyRegistration(ctx: SignonContext, user: User, sessionHash: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingParty(ctx.config);
  const existing = await listPasskeysOfUser(ctx.db, user.uid);
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userID: userHandleOf(user.uid),
    userDisplayName: user.name,
    timeout: ceremonySeconds * 1000,
    attestationType: "none",
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
  });
  const now = ctx.now();
  await insertPasskeyChallenge(
    ctx.db,
    { challenge: options.challenge, purpose: "registration", userUid: user.uid, sessionHash, expiresAt: new Date(now.getTime() + ceremonySeconds * 1000) },
    now,
  );
  return options;
}

export type PasskeyRegistrationResult =
  | { ok: true; id: string; name: string }
  | { ok: false; reason: "malformed" | "unknown_challenge" | "not_verified" | "already_registered" | "too_many" };

/**
 * Checks the browser's answer to `beginPasskeyRegistration` and stores the
 * passkey under `name`. The challenge must be one handed to this person in
 * this session and not used or expired (it is used up here, right or
 * wrong); the response must come from the configured origin for the RP ID,
 * with the user present. Audited as `passkey_registered`.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-registering-a-new-credential
 */
export async function finishPasskeyRegistration(
  ctx: SignonContext,
  user: User,
  sessionHash: string,
  input: { name: string; response: string },
  origin: RequestOrigin,
): Promise<PasskeyRegistrationResult> {
  const parsed = parseRegistrationResponse(input.response);
  if (parsed === null) return { ok: false, reason: "malformed" };
  const now = ctx.now();
  const challenge = await takePasskeyChallenge(ctx.db, parsed.challenge, "registration", sessionHash, now);
  if (challenge === null || challenge.userUid !== user.uid) return { ok: false, reason: "unknown_challenge" };
  if (user.passkeyCount >= maxPasskeysPerUser) return { ok: false, reason: "too_many" };
  const rp = relyingParty(ctx.config);
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response: parsed.response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
  } catch {
    // The library throws for every check that fails (origin, RP ID, type, flags, format, signature).
    return { ok: false, reason: "not_verified" };
  }
  if (!verified.verified) return { ok: false, reason: "not_verified" };
  const info = verified.registrationInfo;
  const name = input.name.trim().slice(0, passkeyNameMaxLength);
  const id = randomUUID();
  return ctx.db.transaction(async (tx) => {
    const stored = await insertPasskey(
      tx,
      {
        id,
        userUid: user.uid,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString("base64url"),
        signCount: info.credential.counter,
        transports: info.credential.transports ?? [],
        name,
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        createdAt: now,
        lastUsedAt: null,
      },
      now,
    );
    if (!stored) return { ok: false, reason: "already_registered" } as const;
    await audit(tx, { action: "passkey_registered", at: now, actorUid: user.uid, subjectUid: user.uid, origin, details: { name, passkey_id: id } });
    return { ok: true, id, name } as const;
  });
}
