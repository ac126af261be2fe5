// A small GOV.UK Signon database, written as Signon writes its rows: Devise's sha512 hashes with a salt, 1,000
// stretches and a pepper (and one bcrypt hash of the 2012 kind), Doorkeeper's tokens and secrets in plain text,
// 2-step secrets under Active Record encryption (AES-256-GCM, keys derived with PBKDF2-SHA256), Signon's
// time-based uids. What the tests need to know of it (passwords, secrets, tokens) comes back beside it.
import { createCipheriv, createHash, pbkdf2Sync, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import bcrypt from "bcryptjs";
import type { MariadbServer } from "./mariadb-server.js";

export const pepper = "signon-test-pepper";
export const activeRecordKeys = { primaryKey: "signon test primary key", derivationSalt: "signon test key derivation salt" };

/** Devise's sha512 encryptor, as devise-encryptable computes it. */
function deviseDigest(password: string, salt: string, stretches = 1000): string {
  let digest = pepper;
  for (let round = 0; round < stretches; round++) digest = createHash("sha512").update(`--${salt}--${digest}--${password}--${pepper}--`).digest("hex");
  return digest;
}

/** Rails' Active Record encryption of `plain` (not deterministic: a random IV). */
function activeRecordEncrypt(plain: string): string {
  const key = pbkdf2Sync(activeRecordKeys.primaryKey, activeRecordKeys.derivationSalt, 2 ** 16, 32, "sha256");
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return JSON.stringify({ p: ciphertext.toString("base64"), h: { iv: iv.toString("base64"), at: cipher.getAuthTag().toString("base64") } });
}

/** A Doorkeeper token: 32 random bytes, URL-safe base64 without padding. */
const doorkeeperToken = () => randomBytes(32).toString("base64url");
/** Devise's friendly token: 20 characters. */
const friendlyToken = () => randomBytes(15).toString("base64url").replace(/[lIO0]/g, "s");

/** A uid as Signon's uuid gem makes them: time-based, version 1, no RFC variant. */
let sequence = 0x1a2b;
function signonUid(): string {
  const clock = BigInt(Date.now()) * 10_000n + BigInt(sequence);
  const hex = (value: bigint, width: number) => value.toString(16).padStart(width, "0");
  const mac = randomBytes(6).toString("hex");
  sequence = (sequence + 1) & 0xffff;
  return `${hex(clock & 0xffffffffn, 8)}-${hex((clock >> 32n) & 0xffffn, 4)}-${hex(((clock >> 48n) & 0xffffn) | 0x0100n, 4)}-${hex(BigInt(sequence), 4)}-${mac}`;
}

/** Alice's two passwords before her current one, oldest first, as Signon's password archive keeps them. */
export const aliceEarlierPasswords = ["velvet harbour quantum ladder 42", "granite orchid saffron tunnel 7"] as const;

const when = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000);
const dayAfter = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

export interface SignonPerson {
  id: number;
  uid: string;
  email: string;
  password: string | null;
  otpSecret: string | null;
}

export interface SignonFixture {
  publisher: { id: number; clientId: string; secret: string; redirectUri: string };
  alice: SignonPerson;
  bob: SignonPerson;
  carol: SignonPerson;
  erin: SignonPerson;
  publishingApi: SignonPerson & { token: string };
  pushUser: SignonPerson & { token: string };
  aliceToken: { token: string; refreshToken: string };
  /** Alice's tokens that do not come over: one expired, one revoked. */
  expiredToken: string;
  revokedToken: string;
}

/** Signon's tables (schema.sql), as MySQL statements. */
export const signonSchemaSql = (): string => readFileSync(new URL("schema.sql", import.meta.url), "utf8");

/** Creates Signon's tables in `database` and writes the fixture's rows. */
export async function writeSignonFixture(mariadb: MariadbServer, database: string, options: { publisherRedirectUri?: string } = {}): Promise<SignonFixture> {
  await mariadb.run(database, signonSchemaSql());
  const now = new Date();
  const run = (statement: string, values: unknown[]) => mariadb.run(database, statement, values);

  await run(
    `insert into organisations (id, slug, name, organisation_type, created_at, updated_at, ancestry, content_id, closed, require_2sv) values
      (1, 'government-digital-service', 'Government Digital Service', 'Other', ?, ?, null, 'af07d5a5-df63-4ddc-9383-6a666845ebe9', 0, 0),
      (2, 'gds-publishing', 'GDS Publishing', 'Sub organisation', ?, ?, '1', '0c0e2f7d-8b4c-4f0e-9a4b-1b2c3d4e5f60', 0, 1),
      (3, 'gds-publishing-tools', 'GDS Publishing Tools', 'Sub organisation', ?, ?, '1/2', '5b7a1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', 0, 0),
      (4, 'department-of-odd-ids', 'Department of Odd Ids', 'Other', ?, ?, null, 'not-a-uuid', 1, 0)`,
    [when(900), now, when(800), now, when(700), now, when(600), now],
  );

  const publisher = { id: 1, clientId: doorkeeperToken(), secret: doorkeeperToken(), redirectUri: options.publisherRedirectUri ?? "https://publisher.example/auth/gds/callback" };
  await run(
    `insert into oauth_applications (id, name, uid, secret, redirect_uri, created_at, updated_at, home_uri, description, supports_push_updates, retired, api_only) values
      (1, 'Publisher', ?, ?, ?, ?, ?, 'https://publisher.example', 'Publishes content', 1, 0, 0),
      (2, 'Old Tool', ?, ?, 'https://old-tool.example/auth/gds/callback', ?, ?, 'https://old-tool.example', null, 0, 1, 0)`,
    [publisher.clientId, publisher.secret, publisher.redirectUri, when(1000), now, doorkeeperToken(), doorkeeperToken(), when(2000), now],
  );
  await run(
    `insert into supported_permissions (id, application_id, name, created_at, updated_at, delegatable, grantable_from_ui, \`default\`) values
      (1, 1, 'signin', ?, ?, 1, 1, 0),
      (2, 1, 'user_update_permission', ?, ?, 0, 0, 0),
      (3, 1, 'GDS Editor', ?, ?, 0, 1, 0),
      (4, 1, 'Managing Editor', ?, ?, 1, 1, 1),
      (5, 2, 'signin', ?, ?, 1, 1, 0)`,
    Array(10).fill(now),
  );

  const person = (id: number, email: string, password: string | null, otpSecret: string | null = null): SignonPerson => ({ id, uid: signonUid(), email, password, otpSecret });
  const alice = person(1, "alice@digital.example.gov.uk", "correct horse battery staple", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP");
  const bob = person(2, "bob@digital.example.gov.uk", "an old password from 2011");
  const carol = person(3, "carol@digital.example.gov.uk", null);
  const publishingApi = { ...person(4, "publishing-api@digital.example.gov.uk", null), token: doorkeeperToken() };
  const pushUser = { ...person(5, "signon+permissions@alphagov.co.uk", null), token: doorkeeperToken() };
  const dave = person(6, "dave@gmail.com", "another password of dave's");
  const erin = person(7, "erin@digital.example.gov.uk", "erin's password of 2026");
  const aliceSalt = friendlyToken();
  const erinSalt = friendlyToken();
  const daveSalt = friendlyToken();
  const users: unknown[][] = [
    [alice.id, "Alice Example", alice.email, deviseDigest(alice.password!, aliceSalt), aliceSalt, "admin", 1, 0, null, null, when(1), null, 1, null, null, activeRecordEncrypt(alice.otpSecret!), alice.uid, when(500), when(3), when(1)],
    [bob.id, "Bob Example", bob.email, bcrypt.hashSync(bob.password!, 10).replace(/^\$2b\$/, "$2a$"), null, "normal", 2, 0, when(20), "Left the organisation", null, null, 0, null, null, null, bob.uid, when(4000), when(4000), when(40)],
    [carol.id, "Carol Example", carol.email, "", null, "normal", 3, 0, null, null, null, null, 0, null, null, null, carol.uid, when(5), null, null],
    [publishingApi.id, "Publishing API", publishingApi.email, deviseDigest(doorkeeperToken(), "apiusersalt"), "apiusersalt", "normal", null, 1, null, null, null, null, 0, null, null, null, publishingApi.uid, when(300), null, null],
    [pushUser.id, "Signon API Client (permission and suspension updater)", pushUser.email, deviseDigest(doorkeeperToken(), "pushusersalt"), "pushusersalt", "normal", null, 1, null, null, null, null, 0, null, null, null, pushUser.uid, when(3000), null, null],
    [dave.id, "Dave Example", dave.email, deviseDigest(dave.password!, daveSalt), daveSalt, "normal", 1, 0, null, null, null, null, 0, null, null, null, dave.uid, when(100), when(2), null],
    [erin.id, "Erin Example", erin.email, deviseDigest(erin.password!, erinSalt), erinSalt, "normal", 2, 0, null, null, null, null, 0, "Uses a shared device", dayAfter(60), null, erin.uid, when(50), when(1), null],
  ];
  for (const row of users) {
    const [id, name, email, encrypted, salt, role, organisation, api, suspended, reason, locked, unsuspended, require2sv, exemption, exemptUntil, otp, uid, created, lastSignIn, changed] = row;
    await run(
      `insert into users (id, name, email, encrypted_password, password_salt, role, organisation_id, api_user, suspended_at, reason_for_suspension, locked_at,
         unsuspended_at, require_2sv, reason_for_2sv_exemption, expiry_date_for_2sv_exemption, otp_secret_key, uid, created_at, updated_at,
         current_sign_in_at, last_sign_in_at, password_changed_at, invitation_sent_at, invitation_accepted_at, confirmed_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        id, name, email, encrypted, salt, role, organisation, api, suspended, reason, locked, unsuspended, require2sv, exemption, exemptUntil, otp, uid, created, now,
        lastSignIn, lastSignIn, changed,
        // Carol was invited and has not accepted yet.
        id === carol.id ? when(5) : null, null, created,
      ],
    );
  }
  // Alice's two earlier passwords, as Devise's password archive keeps them.
  const oldSalts = [friendlyToken(), friendlyToken()];
  await run(
    `insert into old_passwords (encrypted_password, password_salt, password_archivable_id, password_archivable_type, created_at) values (?, ?, 1, 'User', ?), (?, ?, 1, 'User', ?)`,
    [deviseDigest(aliceEarlierPasswords[0], oldSalts[0]!), oldSalts[0], when(400), deviseDigest(aliceEarlierPasswords[1], oldSalts[1]!), oldSalts[1], when(100)],
  );
  await run(
    `insert into user_application_permissions (user_id, application_id, supported_permission_id, last_synced_at, created_at, updated_at) values
      (1, 1, 1, ?, ?, ?), (1, 1, 3, ?, ?, ?), (1, 1, 4, null, ?, ?), (1, 2, 5, null, ?, ?),
      (2, 1, 1, null, ?, ?), (7, 1, 1, null, ?, ?),
      (4, 1, 1, null, ?, ?), (5, 1, 1, null, ?, ?), (5, 1, 2, null, ?, ?)`,
    [when(1), now, now, when(1), now, now, now, now, now, now, now, now, now, now, now, now, now, now, now, now],
  );
  const aliceToken = { token: doorkeeperToken(), refreshToken: doorkeeperToken() };
  const expiredToken = doorkeeperToken();
  const revokedToken = doorkeeperToken();
  await run(
    `insert into oauth_access_tokens (resource_owner_id, application_id, token, refresh_token, expires_in, revoked_at, created_at) values
      (1, 1, ?, ?, 7200, null, ?),
      (1, 1, ?, ?, 7200, null, ?),
      (1, 1, ?, null, 7200, ?, ?),
      (4, 1, ?, null, 63113904, null, ?),
      (5, 1, ?, null, 315569520, null, ?)`,
    [
      aliceToken.token, aliceToken.refreshToken, new Date(Date.now() - 600_000),
      // Expired, and revoked: neither comes over.
      expiredToken, doorkeeperToken(), when(2), revokedToken, when(0.01), when(0.02),
      publishingApi.token, when(200), pushUser.token, when(900),
    ],
  );
  // The event log: a sign-in, a sign-in to Publisher, a role change by Alice, and an event Sign-on has no name for;
  // addresses as IPAddr#to_i stores them (192.0.2.1, and 2001:db8::1).
  await run(
    `insert into event_logs (id, uid, created_at, initiator_id, application_id, trailing_message, event_id, ip_address, user_agent_string) values
      (1, ?, ?, null, null, null, 11, 3221225985, 'Mozilla/5.0 (X11; Linux x86_64)'),
      (2, ?, ?, null, 1, null, 47, 3221225985, 'Mozilla/5.0 (X11; Linux x86_64)'),
      (3, ?, ?, 1, null, 'from normal to admin', 33, 42540766411282592856903984951653826561, null),
      (4, ?, ?, null, null, null, 26, null, null)`,
    [alice.uid, when(3), alice.uid, when(3), erin.uid, when(2), bob.uid, when(1)],
  );
  return { publisher, alice, bob, carol, erin, publishingApi, pushUser, aliceToken, expiredToken, revokedToken };
}
