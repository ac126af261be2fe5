import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";

const flags = { userPresent: 0x01, userVerified: 0x04, attestedCredentialData: 0x40 };

function sha256(data: Uint8Array | string): Buffer {
  return createHash("sha256").update(data).digest();
}

function counterBytes(count: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(count);
  return bytes;
}

/** What a test may change in a response, to forge what a real authenticator or browser would not send. */
export interface Tampering {
  origin?: string;
  rpId?: string;
  type?: string;
  challenge?: string;
  userVerified?: boolean;
  counter?: number;
}

/**
 * A software authenticator for HTTP-level tests: a P-256 key pair per
 * credential, "none" attestation, and responses shaped as the browser
 * script posts them (WebAuthn's JSON forms), signed as an authenticator
 * signs them.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16).toString("base64url");
  private readonly keys: { publicKey: KeyObject; privateKey: KeyObject } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  /** The signature counter the next assertion carries (it goes up by one each time). */
  signCount = 0;
  private userHandle: string | undefined;

  constructor(private readonly origin = "http://localhost:3000") {}

  private get rpId(): string {
    return new URL(this.origin).hostname;
  }

  private clientData(type: string, challenge: string, tampering: Tampering): string {
    const json = JSON.stringify({ type: tampering.type ?? type, challenge: tampering.challenge ?? challenge, origin: tampering.origin ?? this.origin, crossOrigin: false });
    return Buffer.from(json).toString("base64url");
  }

  private coseKey(): Uint8Array {
    const jwk = this.keys.publicKey.export({ format: "jwk" });
    const key = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x ?? "", "base64url"))],
      [-3, new Uint8Array(Buffer.from(jwk.y ?? "", "base64url"))],
    ]);
    return isoCBOR.encode(key);
  }

  /** The answer of `navigator.credentials.create()` to `options`. */
  register(options: PublicKeyCredentialCreationOptionsJSON, tampering: Tampering = {}): RegistrationResponseJSON {
    this.userHandle = options.user.id;
    const id = Buffer.from(this.credentialId, "base64url");
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      sha256(tampering.rpId ?? this.rpId),
      Buffer.from([flags.userPresent | flags.userVerified | flags.attestedCredentialData]),
      counterBytes(this.signCount),
      Buffer.alloc(16),
      idLength,
      id,
      this.coseKey(),
    ]);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([["fmt", "none"], ["attStmt", new Map()], ["authData", new Uint8Array(authData)]]) as never);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: this.clientData("webauthn.create", options.challenge, tampering),
        attestationObject: Buffer.from(attestationObject).toString("base64url"),
        transports: ["internal"],
      },
    };
  }

  /** The answer of `navigator.credentials.get()` to `options`, with the next counter. */
  authenticate(options: PublicKeyCredentialRequestOptionsJSON, tampering: Tampering = {}): AuthenticationResponseJSON {
    this.signCount += 1;
    const userVerified = tampering.userVerified ?? true;
    const authData = Buffer.concat([
      sha256(tampering.rpId ?? this.rpId),
      Buffer.from([flags.userPresent | (userVerified ? flags.userVerified : 0)]),
      counterBytes(tampering.counter ?? this.signCount),
    ]);
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, tampering);
    const signature = sign("sha256", Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, "base64url"))]), this.keys.privateKey);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON,
        authenticatorData: authData.toString("base64url"),
        signature: signature.toString("base64url"),
        ...(this.userHandle === undefined ? {} : { userHandle: this.userHandle }),
      },
    };
  }
}
