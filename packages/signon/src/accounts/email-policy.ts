import { domainToASCII } from "node:url";
import type { EmailPolicy } from "../config.js";
import { consumerMailDomains } from "./consumer-mail-domains.js";

/**
 * Checks an e-mail address against the installation's policy for new users
 * and e-mail changes: unless `SIGNON_EMAIL_ALLOW_NON_ASCII` is set, an
 * address with a character outside ASCII is refused (an internationalised
 * domain written in its ASCII `xn--` form is accepted: the address is then
 * plain ASCII, as the policy wants); a domain on the block list (by default
 * the consumer mail services of `consumer-mail-domains.ts`) is refused, and
 * when an allow list is set, only its domains are accepted. A list entry
 * covers the domain itself and every subdomain of it (`example.org` covers
 * `team.example.org`, not `badexample.org`). Returns the message for the
 * form, or `null` when the address may be used. The address's shape is
 * checked elsewhere.
 */
export function emailPolicyProblem(policy: EmailPolicy, email: string): string | null {
  const at = email.lastIndexOf("@");
  const domain = email.slice(at + 1).trim().toLowerCase().replace(/\.$/, "");
  const ascii = domainToASCII(domain);
  // eslint-disable-next-line no-control-regex -- the complement of ASCII is the point
  const outsideAscii = /[^\x00-\x7f]/;
  if (!policy.allowNonAscii && outsideAscii.test(email)) {
    const hint = !outsideAscii.test(email.slice(0, at)) && ascii !== "" ? `; the domain can be written ${ascii}` : "";
    return `Use an e-mail address made of ASCII letters, digits and punctuation only${hint}`;
  }
  if (ascii === "") return "Enter an e-mail address like name@example.org";
  const covers = (entry: string) => ascii === entry || ascii.endsWith(`.${entry}`);
  const blocked = policy.blockedDomains.find(covers);
  if (blocked !== undefined) {
    if (consumerMailDomains.includes(blocked)) return `Addresses at ${domain}, a personal e-mail service, cannot be used here: use a work e-mail address`;
    return `E-mail addresses at ${domain} cannot be used here; use a work address`;
  }
  if (policy.allowedDomains.length > 0 && !policy.allowedDomains.some(covers)) {
    return `E-mail addresses at ${domain} cannot be used here; use an address at ${policy.allowedDomains.join(", ")}`;
  }
  return null;
}
