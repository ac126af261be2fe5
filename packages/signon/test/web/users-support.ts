import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { createOrganisation } from "../../src/accounts/organisations.js";
import type { SignonContext } from "../../src/context.js";
import type { Role } from "../../src/accounts/manage-users.js";
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
  role: Role,
  organisationId?: string,
  /** The actor's own permissions, by application name: an organisation admin grants only on applications where they hold `signin`. */
  permissions?: Record<string, string[]>,
): Promise<{ browser: InjectBrowser; uid: string; email: string }> {
  const user = await createUser(ctx, { role, organisationId, ...(permissions ? { permissions } : {}) });
  return { browser: await signedInBrowser(app, user.email, defaultPassword), uid: user.uid, email: user.email };
}

/** The names in the users table, in order. */
export function listedNames(response: LightMyRequestResponse): string[] {
  return [...response.body.matchAll(/<th scope="row"><a href="\/users\/[0-9a-f-]+">([^<]*)<\/a><\/th>/g)].map((match) => match[1] as string);
}

/** Opens `pageUrl` for its CSRF token and posts `fields` to `action`; a field given as an array is sent once per value. */
export async function submitMany(
  app: FastifyInstance,
  browser: InjectBrowser,
  pageUrl: string,
  action: string,
  fields: Record<string, string | string[]>,
): Promise<LightMyRequestResponse> {
  const page = await browser.get(pageUrl);
  const token = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1];
  if (token === undefined) throw new Error(`no CSRF token on ${pageUrl} (status ${page.statusCode})`);
  const body = new URLSearchParams({ _csrf: token });
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
  return app.inject({
    method: "POST",
    url: action,
    headers: { cookie: browser.cookieHeader, "content-type": "application/x-www-form-urlencoded" },
    payload: body.toString(),
  });
}
