import type { PushFanOut } from "../repositories/push-deliveries.js";

/**
 * The applications a person's suspension, sign-out or change of details is
 * pushed to, in words, as `SIGNON_PUSH_FAN_OUT` counts them: `token`, those
 * that issued them a token (an exchanged sign-in code or a token issued in
 * advance); `token-or-permission`, also those where they hold a permission.
 * `listApplicationsPushedAboutUser` lists them by the rule the fan-out
 * itself queues by; the confirmation pages and the event log say it in these
 * words, and no other.
 */
export function applicationsOfPersonWords(fanOut: PushFanOut): { some: string; none: string } {
  return fanOut === "token"
    ? { some: "the applications that issued them a token", none: "no application issued them a token" }
    : {
        some: "the applications that issued them a token or where they hold a permission",
        none: "no application issued them a token or holds a permission of theirs",
      };
}

/**
 * Which applications are told to sign the person out, by name: `"now"` on a
 * confirmation page ("… are told …"), `"then"` in the event log ("… were told …").
 */
export function toldToSignOut(fanOut: PushFanOut, names: readonly string[], when: "now" | "then"): string {
  const words = applicationsOfPersonWords(fanOut);
  if (names.length === 0) return `${capitalised(words.none)}, so none ${when === "now" ? "is" : "was"} told to sign them out`;
  return `${capitalised(words.some)} ${when === "now" ? "are" : "were"} told to sign them out: ${names.join(", ")}`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
