import { describe, expect, it } from "vitest";
import type { SessionRecord, SessionStore } from "../../src/storage/session-store.js";
import type { UserStore } from "../../src/storage/user-store.js";
import type { SignonUserDetails } from "../../src/user.js";

/** The behaviour every `UserStore` and `SessionStore` must have, run against each implementation. */
export function storeContract(name: string, stores: () => { users: UserStore; sessions: SessionStore }): void {
  const details = (overrides: Partial<SignonUserDetails> = {}): SignonUserDetails => ({
    uid: "6a3c7d1e-0000-4000-8000-000000000001",
    name: "Ada Lovelace",
    email: "ada@example.org",
    permissions: ["admin", "signin"],
    organisationSlug: "gds",
    organisationContentId: "af07d5a5-df63-4ddc-9383-6a666845ebe9",
    disabled: false,
    ...overrides,
  });
  const session = (overrides: Partial<SessionRecord> = {}): SessionRecord => ({
    idDigest: "a".repeat(64),
    uid: "6a3c7d1e-0000-4000-8000-000000000001",
    signIn: null,
    tokens: { accessToken: "at-1", refreshToken: "rt-1", expiresAt: 1_700_007_200_000, refreshAt: 1_700_006_900_000 },
    createdAt: 1_700_000_000_000,
    expiresAt: 1_700_072_000_000,
    ...overrides,
  });

  describe(`${name} UserStore`, () => {
    it("finds nothing for an unknown uid", async () => {
      expect(await stores().users.findByUid("nobody")).toBeNull();
    });

    it("creates a user signed in, and replaces the details on the next upsert", async () => {
      const { users } = stores();
      expect(await users.upsert(details())).toEqual({ ...details(), remotelySignedOut: false });

      const changed = details({ name: "Ada King", permissions: ["signin"], organisationSlug: null, disabled: true });
      expect(await users.upsert(changed)).toEqual({ ...changed, remotelySignedOut: false });
      expect(await users.findByUid(changed.uid)).toEqual({ ...changed, remotelySignedOut: false });
    });

    it("keeps the remote sign-out flag across upserts unless told otherwise", async () => {
      const { users } = stores();
      await users.upsert(details());

      expect(await users.markRemotelySignedOut(details().uid)).toBe(true);
      expect(await users.upsert(details({ name: "Pushed" }))).toEqual(
        expect.objectContaining({ name: "Pushed", remotelySignedOut: true }),
      );
      expect(await users.upsert(details(), { remotelySignedOut: false })).toEqual(
        expect.objectContaining({ remotelySignedOut: false }),
      );
    });

    it("reports marking an unknown user as false", async () => {
      expect(await stores().users.markRemotelySignedOut("nobody")).toBe(false);
    });
  });

  describe(`${name} SessionStore`, () => {
    it("gives back a created session until it expires", async () => {
      const { sessions } = stores();
      await sessions.create(session());

      expect(await sessions.find("a".repeat(64), 1_700_071_999_999)).toEqual(session());
      expect(await sessions.find("a".repeat(64), 1_700_072_000_000)).toBeNull();
      expect(await sessions.find("b".repeat(64), 1_700_000_000_000)).toBeNull();
    });

    it("keeps a pending sign-in", async () => {
      const { sessions } = stores();
      const pending = session({ uid: null, tokens: null, signIn: { state: "s", codeVerifier: "v", returnTo: "/x" } });
      await sessions.create(pending);

      expect(await sessions.find(pending.idDigest, 1_700_000_000_000)).toEqual(pending);
    });

    it("deletes one session, a user's sessions, and expired sessions", async () => {
      const { sessions } = stores();
      await sessions.create(session({ idDigest: "1".repeat(64) }));
      await sessions.create(session({ idDigest: "2".repeat(64) }));
      await sessions.create(session({ idDigest: "3".repeat(64), uid: "someone-else" }));
      await sessions.create(session({ idDigest: "4".repeat(64), uid: "someone-else", expiresAt: 1_700_000_000_001 }));
      const now = 1_700_000_000_000;

      await sessions.delete("1".repeat(64));
      expect(await sessions.find("1".repeat(64), now)).toBeNull();
      expect(await sessions.deleteForUser(session().uid ?? "")).toBe(1);
      expect(await sessions.find("2".repeat(64), now)).toBeNull();
      expect(await sessions.deleteExpired(1_700_000_000_001)).toBe(1);
      expect(await sessions.find("3".repeat(64), now)).toEqual(expect.objectContaining({ uid: "someone-else" }));
    });

    it("lets one claim to refresh win until it expires", async () => {
      const { sessions } = stores();
      await sessions.create(session());
      const due = session().tokens?.refreshAt ?? 0;

      expect(await sessions.claimRefresh(session().idDigest, due, due + 30_000)).toBe(true);
      expect(await sessions.claimRefresh(session().idDigest, due + 1000, due + 31_000)).toBe(false);
      expect(await sessions.claimRefresh(session().idDigest, due + 30_000, due + 60_000)).toBe(true);
    });

    it("refuses a claim before the tokens are due, and after they were refreshed", async () => {
      const { sessions } = stores();
      await sessions.create(session());
      const due = session().tokens?.refreshAt ?? 0;
      expect(await sessions.claimRefresh(session().idDigest, due - 1, due + 30_000)).toBe(false);
      expect(await sessions.claimRefresh(session().idDigest, due, due + 30_000)).toBe(true);

      const tokens = { accessToken: "at-2", refreshToken: "rt-2", expiresAt: due + 7_200_000, refreshAt: due + 6_900_000 };
      await sessions.saveTokens(session().idDigest, tokens);

      expect(await sessions.find(session().idDigest, due)).toEqual(session({ tokens }));
      expect(await sessions.claimRefresh(session().idDigest, due + 1, due + 30_001)).toBe(false);
      expect(await sessions.claimRefresh(session().idDigest, due + 6_900_000, due + 6_930_000)).toBe(true);
    });

    it("refuses a claim on a session that does not exist", async () => {
      expect(await stores().sessions.claimRefresh("f".repeat(64), 0, 1)).toBe(false);
    });
  });
}
