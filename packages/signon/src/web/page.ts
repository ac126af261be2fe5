import type { FastifyReply, FastifyRequest } from "fastify";
import { setSessionFlash } from "../repositories/sessions.js";
import type { Session } from "../repositories/sessions.js";
import { formatTime } from "../time-format.js";
import { mayListUsers, mayManageApiUsers, mayManageApplications, mayManageOrganisations } from "./policy.js";

/** A link of the navigation bar. */
export interface NavLink {
  href: string;
  label: string;
}

/** What the layout shows around every page of a signed-in user. */
export interface PageFrame {
  nav: NavLink[];
  currentUser: { name: string; email: string } | null;
  csrfToken: string;
  flash: Session["flash"];
  /** The path of this page, to mark the current navigation link. */
  path: string;
}

/**
 * Renders a page of the web interface inside the layout, with navigation for
 * the signed-in user's role, a CSRF token for its forms and any flash message
 * (shown once, then cleared). Pages are never cached.
 */
export async function renderPage(
  request: FastifyRequest,
  reply: FastifyReply,
  view: string,
  data: Record<string, unknown> & { title: string },
  status = 200,
): Promise<FastifyReply> {
  const session = request.webSession;
  const frame: PageFrame = {
    nav: [],
    currentUser: null,
    csrfToken: reply.generateCsrf(),
    flash: null,
    path: request.url.split("?")[0] ?? "/",
  };
  if (session) {
    const user = session.user;
    frame.currentUser = { name: user.name, email: user.email };
    // Nothing to navigate to until the 2-step verification required of them is set up.
    frame.nav = session.twoStepSetUpRequired ? [] : navigationFor(user);
    // A session read on a replica (the primary away) cannot have its flash message taken: it waits for the primary.
    if (session.flash && session.readOnly !== true) {
      frame.flash = session.flash;
      await setSessionFlash(request.server.signon.db, session.idHash, null);
    }
  }
  return reply.code(status).header("cache-control", "no-store").view(view, { formatTime, ...data, frame, csrfToken: frame.csrfToken });
}

/** The navigation a user's role allows. */
export function navigationFor(user: Parameters<typeof mayListUsers>[0]): NavLink[] {
  const links: NavLink[] = [{ href: "/", label: "Dashboard" }];
  if (mayListUsers(user)) links.push({ href: "/users", label: "Users" });
  if (mayManageApplications(user)) links.push({ href: "/applications", label: "Applications" });
  if (mayManageApiUsers(user)) links.push({ href: "/api-users", label: "API users" });
  if (mayManageOrganisations(user)) links.push({ href: "/organisations", label: "Organisations" });
  links.push({ href: "/account", label: "Your account" });
  return links;
}

/**
 * Redirects (303) after a successful form post, leaving a flash message for
 * the next page.
 */
export async function redirectWithFlash(
  request: FastifyRequest,
  reply: FastifyReply,
  location: string,
  flash: NonNullable<Session["flash"]>,
): Promise<FastifyReply> {
  if (request.webSession) await setSessionFlash(request.server.signon.db, request.webSession.idHash, flash);
  return reply.redirect(location, 303);
}
