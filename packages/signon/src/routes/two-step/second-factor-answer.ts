import type { FastifyReply } from "fastify";
import type { SecondFactorResult } from "../../accounts/two-step-sign-in.js";
import { setRememberedBrowserCookie } from "../../http/remembered-browser-cookie.js";
import { clearSessionCookie, setSessionCookie } from "../../http/session-cookie.js";
import { signInFailedMessage, tooManyTriesMessage } from "../sign-in.js";

/** The failures that end the step, whichever factor was given: the rest are shown on the factor's own form. */
type SettlingReason = "no_session" | "locked" | "refused";
const settlingReasons: ReadonlySet<string> = new Set<SettlingReason>(["no_session", "locked", "refused"]);

/** The reasons a result of type `R` can fail for. */
type FailureReason<R> = R extends { ok: false; reason: infer Reason extends string } ? Reason : never;

/**
 * The answer to a second factor, the same for a 2-step code and a passkey:
 * on success the new session's cookie (and the remembered-browser cookie
 * when asked for) and a 303 to `returnTo`; without a waiting sign-in, back
 * to the sign-in form; for a refused source or a locked account, the
 * half-signed-in session's cookie cleared and the sign-in form again with
 * the answer a failed sign-in gets (S15: 429 with `Retry-After` and the
 * words saying when to try again, or 401 with the usual words). Any other
 * failure (a wrong code, a refused passkey) is the caller's to show on its
 * own form, through `showForm`.
 */
export async function answerSecondFactor<Result extends SecondFactorResult | { ok: false; reason: string }>(
  reply: FastifyReply,
  outcome: Result,
  returnTo: string,
  showForm: (reason: Exclude<FailureReason<Result>, SettlingReason>) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const result: SecondFactorResult | { ok: false; reason: string } = outcome;
  const { config } = reply.server.signon;
  if (result.ok) {
    setSessionCookie(reply, config, result.sessionId);
    if (result.rememberToken !== null) setRememberedBrowserCookie(reply, config, result.rememberToken);
    return reply.header("cache-control", "no-store").redirect(returnTo, 303);
  }
  // Not one of the settling reasons, so one of the factor's own (the type says which).
  if (!settlingReasons.has(result.reason)) return showForm(result.reason as Exclude<FailureReason<Result>, SettlingReason>);
  if (result.reason === "no_session") return signInAgain(reply, returnTo);
  clearSessionCookie(reply, config);
  const retryAfterSeconds = "retryAfterSeconds" in result && typeof result.retryAfterSeconds === "number" ? result.retryAfterSeconds : null;
  if (retryAfterSeconds !== null) reply.header("retry-after", String(Math.ceil(retryAfterSeconds)));
  const message = result.reason === "refused" && retryAfterSeconds !== null ? tooManyTriesMessage(retryAfterSeconds, reply.server.signon.now()) : signInFailedMessage;
  return reply
    .code(result.reason === "refused" ? 429 : 401)
    .header("cache-control", "no-store")
    .view("sign-in.eta", { title: "Sign in", message, email: "", returnTo, csrfToken: reply.generateCsrf() });
}

/** Back to the sign-in form, for a browser with no sign-in waiting for its second factor. */
export function signInAgain(reply: FastifyReply, returnTo: string): FastifyReply {
  return reply.header("cache-control", "no-store").redirect(`/sign-in?return_to=${encodeURIComponent(returnTo)}`, 303);
}
