import { describe, expect, it } from "vitest";
import { emailPolicyProblem } from "../../src/accounts/email-policy.js";

describe("emailPolicyProblem", () => {
  const open = { allowedDomains: [], blockedDomains: [], allowNonAscii: false };

  it("accepts any ASCII address when no list is set, and refuses non-ASCII ones unless allowed", () => {
    expect(emailPolicyProblem(open, "ada@anything.example")).toBeNull();
    expect(emailPolicyProblem(open, "adä@example.org")).toMatch(/ASCII/);
    expect(emailPolicyProblem(open, "ada@xn--bcher-kva.example")).toMatch(/ASCII/);
    expect(emailPolicyProblem({ ...open, allowNonAscii: true }, "adä@bücher.example")).toBeNull();
  });

  it("covers a listed domain and its subdomains, never a longer name ending the same way; the block list wins", () => {
    const policy = { allowedDomains: ["example.org", "xn--bcher-kva.example"], blockedDomains: ["old.example.org"], allowNonAscii: true };
    expect(emailPolicyProblem(policy, "a@example.org")).toBeNull();
    expect(emailPolicyProblem(policy, "a@Team.Example.org")).toBeNull();
    expect(emailPolicyProblem(policy, "a@bücher.example")).toBeNull();
    expect(emailPolicyProblem(policy, "a@notexample.org")).toMatch(/cannot be used here; use an address at example.org/);
    expect(emailPolicyProblem(policy, "a@x.old.example.org")).toMatch(/use a work address/);
  });
});
