import { Type, type Static } from "@sinclair/typebox";

/**
 * A user as Sign-on describes it to this application: the body of `/user.json`
 * and of a `PUT /users/{uid}` push. Fields Sign-on may leave out default to
 * "unknown" values when stored.
 *
 * @see /work/shared/spec/DECISIONS.md S11, S12, S13
 */
export const SignonUserJson = Type.Object(
  {
    uid: Type.String({ minLength: 1, maxLength: 255 }),
    name: Type.String({ maxLength: 1000 }),
    email: Type.String({ maxLength: 1000 }),
    permissions: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000 }),
    organisation_slug: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    organisation_content_id: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type SignonUserJson = Static<typeof SignonUserJson>;

/** The envelope `{"user": {...}}` used by `/user.json` and by pushes. */
export const SignonUserEnvelope = Type.Object({ user: SignonUserJson }, { additionalProperties: true });
export type SignonUserEnvelope = Static<typeof SignonUserEnvelope>;

/** A NUL character (no text column holds one) or a surrogate not in a pair (it would be stored as U+FFFD). */
// eslint-disable-next-line no-control-regex -- finding NUL is the point
const UNSTORABLE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `text` holds something the user store cannot keep as it was sent. */
export function holdsUnstorableText(text: string): boolean {
  return UNSTORABLE_TEXT.test(text);
}

/**
 * The first field of a pushed user (or its uid in the path) that the user
 * store cannot keep as it was sent, or null when all can be: a push carrying
 * one is refused with 400 instead of failing the write.
 */
export function unstorableField(uid: string, user: SignonUserJson): string | null {
  const texts: [string, string | null | undefined][] = [
    ["uid", uid],
    ["user.uid", user.uid],
    ["user.name", user.name],
    ["user.email", user.email],
    ["user.organisation_slug", user.organisation_slug],
    ["user.organisation_content_id", user.organisation_content_id],
    ...user.permissions.map((permission, index): [string, string] => [`user.permissions.${index}`, permission]),
  ];
  return texts.find(([, text]) => typeof text === "string" && holdsUnstorableText(text))?.[0] ?? null;
}

/** A user as this application keeps it. */
export interface SignonUser {
  uid: string;
  name: string;
  email: string;
  /** This application's permission names, as Sign-on last sent them. */
  permissions: string[];
  organisationSlug: string | null;
  organisationContentId: string | null;
  disabled: boolean;
  /** Set by a reauth push; cleared when the user signs in again. */
  remotelySignedOut: boolean;
}

/** The fields of a user that Sign-on decides (everything except `remotelySignedOut`). */
export type SignonUserDetails = Omit<SignonUser, "remotelySignedOut">;

/** Turns Sign-on's wire form of a user into the stored form, without the sign-out flag. */
export function userDetailsFromJson(json: SignonUserJson): SignonUserDetails {
  return {
    uid: json.uid,
    name: json.name,
    email: json.email,
    permissions: [...new Set(json.permissions)].sort(),
    organisationSlug: json.organisation_slug ?? null,
    organisationContentId: json.organisation_content_id ?? null,
    disabled: json.disabled ?? false,
  };
}
