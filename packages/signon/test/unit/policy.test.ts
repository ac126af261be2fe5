import { describe, expect, it } from "vitest";
import { assignableRoles, grantablePermissions, mayListUsers, mayManageApplications, mayManageUser } from "../../src/web/policy.js";

const orgA = "00000000-0000-4000-8000-00000000000a";
const orgB = "00000000-0000-4000-8000-00000000000b";
const person = (role: "superadmin" | "admin" | "organisation_admin" | "normal", organisationId: string | null = orgA) => ({
  uid: crypto.randomUUID(),
  role,
  organisationId,
  isApiUser: false,
});
const application = { id: "00000000-0000-4000-8000-0000000000a1", supportedPermissions: ["signin", "editor", "publisher"], delegatablePermissions: ["signin", "editor"] };

describe("web interface rules", () => {
  it("let a superadmin manage everyone, applications included", () => {
    const actor = person("superadmin");
    expect(mayManageUser(actor, person("superadmin", orgB))).toBe(true);
    expect(mayManageUser(actor, { ...person("normal"), isApiUser: true })).toBe(true);
    expect(mayManageApplications(actor)).toBe(true);
    expect(grantablePermissions(actor, application)).toEqual(["signin", "editor", "publisher"]);
  });

  it("let an admin manage users and permissions but not superadmins or applications", () => {
    const actor = person("admin");
    expect(mayManageUser(actor, person("normal", orgB))).toBe(true);
    expect(mayManageUser(actor, person("superadmin"))).toBe(false);
    expect(mayManageApplications(actor)).toBe(false);
    expect(assignableRoles(actor)).not.toContain("superadmin");
  });

  it("keep an organisation admin to their organisation and to delegatable permissions of applications they may sign in to", () => {
    const actor = { ...person("organisation_admin"), signInApplicationIds: [application.id] };
    expect(mayManageUser(actor, person("normal", orgA))).toBe(true);
    expect(mayManageUser(actor, person("normal", orgB))).toBe(false);
    expect(mayManageUser(actor, person("normal", null))).toBe(false);
    expect(mayManageUser(actor, person("admin", orgA))).toBe(false);
    expect(grantablePermissions(actor, application)).toEqual(["signin", "editor"]);
    expect(assignableRoles(actor)).toEqual(["organisation_admin", "normal"]);
    expect(grantablePermissions({ ...actor, signInApplicationIds: [] }, application)).toEqual([]);
    expect(grantablePermissions({ ...actor, signInApplicationIds: undefined }, application)).toEqual([]);
  });

  it("give a normal user nothing but their own account", () => {
    const actor = person("normal");
    expect(mayListUsers(actor)).toBe(false);
    expect(mayManageUser(actor, person("normal"))).toBe(false);
    expect(grantablePermissions(actor, application)).toEqual([]);
  });
});
