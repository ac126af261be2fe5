import type { FastifyReply, FastifyRequest } from "fastify";
import { renderPage } from "../../web/page.js";

const pages = {
  unknown: { status: 404, title: "This link is not valid", message: "The link is not right, or a newer link replaced it." },
  expired: { status: 410, title: "This link has expired", message: "Links from our e-mails work for a limited time only, and not while the account is suspended." },
  used: { status: 410, title: "This link has already been used", message: "Each link from our e-mails works once." },
} as const;

const nextSteps = {
  invitation: { nextStep: "Ask the administrator who invited you to send a new invitation.", nextHref: "/sign-in", nextLabel: "Go to sign in" },
  password_reset: { nextStep: "You can ask for a new link.", nextHref: "/password-reset", nextLabel: "Reset your password" },
  unlock: {
    nextStep: "A locked account unlocks by itself when its hour is up. Resetting your password unlocks it too.",
    nextHref: "/password-reset",
    nextLabel: "Reset your password",
  },
  email_change: { nextStep: "You can ask for a new link on your account page.", nextHref: "/account", nextLabel: "Go to your account" },
} as const;

/**
 * The page for an e-mailed link that cannot be used: 404 when unknown (or
 * replaced by a newer one), 410 when expired or already used.
 */
export async function sendUnusableLinkPage(
  request: FastifyRequest,
  reply: FastifyReply,
  state: keyof typeof pages,
  purpose: keyof typeof nextSteps,
): Promise<FastifyReply> {
  const page = pages[state];
  return renderPage(request, reply, "account/link-unusable.eta", { title: page.title, message: page.message, ...nextSteps[purpose] }, page.status);
}
