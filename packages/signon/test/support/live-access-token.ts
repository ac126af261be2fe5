import type { LiveAccessToken } from "../../src/repositories/resource-tokens.js";

/** A lookup's answer for a live token of a person with `signin`, expiring an hour after `now`. */
export function liveAccessToken(now: Date = new Date(), expiresAt: Date = new Date(now.getTime() + 3_600_000)): LiveAccessToken {
  return {
    expiresAt,
    createdAt: now,
    application: { id: "app", clientId: "client", retired: false },
    user: { uid: "uid", name: "Ada", email: "ada@example.org", suspendedAt: null, organisationSlug: null, organisationContentId: null },
    permissions: ["signin"],
  };
}
