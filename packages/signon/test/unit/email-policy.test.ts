import { describe, expect, it } from "vitest";
import { consumerMailDomains } from "../../src/accounts/consumer-mail-domains.js";
import { emailPolicyProblem } from "../../src/accounts/email-policy.js";

describe("emailPolicyProblem", () => {
  const open = { allowedDomains: [], blockedDomains: [], allowNonAscii: false };
  const byDefault = { ...open, blockedDomains: consumerMailDomains };

  it("accepts any ASCII address when no list is set, and refuses non-ASCII ones unless allowed", () => {
    expect(emailPolicyProblem(open, "ada@anything.example")).toBeNull();
    expect(emailPolicyProblem(open, "adä@example.org")).toBe("Use an e-mail address made of ASCII letters, digits and punctuation only");
    expect(emailPolicyProblem({ ...open, allowNonAscii: true }, "adä@bücher.example")).toBeNull();
  });

  it("accepts an internationalised domain written in its ASCII (xn--) form, and says so when it is written in Unicode", () => {
    expect(emailPolicyProblem(open, "ada@xn--bcher-kva.example")).toBeNull();
    expect(emailPolicyProblem(open, "ada@Team.XN--BCHER-KVA.example")).toBeNull();
    expect(emailPolicyProblem(open, "ada@bücher.example")).toBe("Use an e-mail address made of ASCII letters, digits and punctuation only; the domain can be written xn--bcher-kva.example");
    // A non-ASCII local part has no ASCII form to suggest.
    expect(emailPolicyProblem(open, "adä@bücher.example")).toBe("Use an e-mail address made of ASCII letters, digits and punctuation only");
  });

  it("covers a listed domain and its subdomains, never a longer name ending the same way; the block list wins", () => {
    const policy = { allowedDomains: ["example.org", "xn--bcher-kva.example"], blockedDomains: ["old.example.org"], allowNonAscii: true };
    expect(emailPolicyProblem(policy, "a@example.org")).toBeNull();
    expect(emailPolicyProblem(policy, "a@Team.Example.org")).toBeNull();
    expect(emailPolicyProblem(policy, "a@bücher.example")).toBeNull();
    expect(emailPolicyProblem(policy, "a@notexample.org")).toMatch(/cannot be used here; use an address at example.org/);
    expect(emailPolicyProblem(policy, "a@x.old.example.org")).toBe("E-mail addresses at x.old.example.org cannot be used here; use a work address");
  });

  it("refuses the built-in consumer mail services as personal, naming the domain, subdomains included", () => {
    for (const domain of ["gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "hotmail.co.uk", "live.com", "yahoo.com", "yahoo.co.uk", "icloud.com", "me.com", "aol.com", "proton.me", "protonmail.com", "gmx.com", "gmx.de", "gmx.net"]) {
      expect(emailPolicyProblem(byDefault, `someone@${domain}`)).toBe(`Addresses at ${domain}, a personal e-mail service, cannot be used here: use a work e-mail address`);
    }
    expect(emailPolicyProblem(byDefault, "someone@GMail.com.")).toBe("Addresses at gmail.com, a personal e-mail service, cannot be used here: use a work e-mail address");
    expect(emailPolicyProblem(byDefault, "someone@eu.mail.com")).toBe("Addresses at eu.mail.com, a personal e-mail service, cannot be used here: use a work e-mail address");
    for (const email of ["someone@example.org", "someone@notgmail.com", "someone@gmail.com.example.org", "someone@me.community"]) expect(emailPolicyProblem(byDefault, email)).toBeNull();
  });

  it("refuses the big services' forms in other countries too (Outlook, Hotmail, Live, Yahoo, Proton, GMX, Web.de, …)", () => {
    const national = [
      "outlook.fr", "outlook.de", "outlook.jp", "outlook.com.br", "hotmail.de", "hotmail.it", "hotmail.co.jp", "hotmail.com.au", "live.fr", "live.com.mx",
      "yahoo.co.jp", "yahoo.fr", "yahoo.de", "yahoo.es", "yahoo.it", "yahoo.ca", "yahoo.co.in", "yahoo.com.au", "yahoo.com.br", "yahoo.com.mx",
      "protonmail.ch", "pm.me", "gmx.at", "gmx.ch", "gmx.co.uk", "gmx.fr", "web.de", "aol.fr", "yandex.ua", "inbox.ru", "tutanota.de",
    ];
    for (const domain of national) {
      expect(emailPolicyProblem(byDefault, `someone@${domain}`), domain).toBe(`Addresses at ${domain}, a personal e-mail service, cannot be used here: use a work e-mail address`);
    }
    // A work address at a company whose name ends like a service's is still accepted.
    for (const email of ["someone@outlook.fr.example.org", "someone@myyahoo.fr", "someone@protonmail.church"]) expect(emailPolicyProblem(byDefault, email), email).toBeNull();
    expect([...consumerMailDomains]).toEqual([...consumerMailDomains].sort());
    expect(new Set(consumerMailDomains).size).toBe(consumerMailDomains.length);
    for (const domain of consumerMailDomains) expect(domain, domain).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
  });
});
