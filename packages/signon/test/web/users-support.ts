import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { createOrganisation } from "../../src/accounts/organisations.js";
import type { SignonContext } from "../../src/context.js";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";

let organisations = 0;

/** An organisation with a fresh slug. */
export async function createTestOrganisation(ctx: SignonContext, name = `Organisation ${++organisations}`) {
  return createOrganisation(ctx, { slug: `organisation-${++organisations}`, name });
}

/** A person of this role (and organisation) signed in through the sign-in form. */
export async function signedInAs(
  app: FastifyInstance,
  ctx: SignonContext,
  role: "superadmin" | "admin" | "organisation_admin" | "normal",
  organisationId?: string,
): Promise<{ browser: InjectBrowser; uid: string; email: string }> {
  const user = await createUser(ctx, { role, organisationId });
  return { browser: await signedInBrowser(app, user.email, defaultPassword), uid: user.uid, email: user.email };
}

/** The text of a page without tags and with entities decoded, spaces collapsed, for `toContain` checks. */
export function pageText(response: LightMyRequestResponse): string {
  return response.body
    .replace(/<[^>]*>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}

/** The names in the users table, in order. */
export function listedNames(response: LightMyRequestResponse): string[] {
  return [...response.body.matchAll(/<th scope="row"><a href="\/users\/[0-9a-f-]+">([^<]*)<\/a><\/th>/g)].map((match) => match[1] as string);
}
