import { Type, type FastifyPluginAsyncTypebox, type Static } from "@fastify/type-provider-typebox";
import { allManageableUsers, findManageableUsers, manageableScope, statusTags, usersPerPage, type UserFilters } from "../../accounts/user-search.js";
import { usersCsv } from "../../accounts/users-csv.js";
import { choosesOrganisation } from "../../accounts/user-form.js";
import { twoStepFilters, userStatuses } from "../../repositories/user-search.js";
import { listLiveApplications, listOrganisationChoices, permissionsOfUsers } from "../../repositories/user-form-choices.js";
import { renderPage } from "../../web/page.js";
import type { SignonContext } from "../../context.js";
import type { Application } from "../../repositories/applications.js";
import { grantablePermissions, isOrganisationScoped, mayAssignOrganisation, type Actor } from "../../web/policy.js";
import { signedInUser } from "../../web/signed-in.js";
import { formatTime, roleLabels } from "./format.js";
import { usersPageGuards } from "./managed-user.js";

const uuid = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

/** The filter form's fields; every one may be empty (no filter). */
const UsersQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200 })),
    role: Type.Optional(
      Type.Union([Type.Literal(""), Type.Literal("superadmin"), Type.Literal("admin"), Type.Literal("super_organisation_admin"), Type.Literal("organisation_admin"), Type.Literal("normal")]),
    ),
    organisation: Type.Optional(Type.String({ pattern: `^(|none|${uuid})$` })),
    status: Type.Optional(
      Type.Union([Type.Literal(""), Type.Literal("active"), Type.Literal("suspended"), Type.Literal("locked"), Type.Literal("invited")]),
    ),
    permission: Type.Optional(Type.String({ pattern: `^(|${uuid}:[a-z][a-z0-9_]{0,63})$` })),
    two_step: Type.Optional(Type.Union([Type.Literal(""), ...twoStepFilters.map((filter) => Type.Literal(filter))])),
    page: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,5}$" })),
  },
  { additionalProperties: false },
);
type UsersQuery = Static<typeof UsersQuery>;

function filtersOf(query: UsersQuery): UserFilters {
  return {
    text: query.q ?? "",
    role: query.role ?? "",
    organisation: query.organisation?.toLowerCase() ?? "",
    status: query.status ?? "",
    permission: query.permission ? query.permission.replace(/^[^:]+/, (id) => id.toLowerCase()) : "",
    twoStep: query.two_step ?? "",
  };
}

/** The permissions the actor may filter by, on live applications: every one for superadmins and admins, those they may grant for organisation-scoped administrators. */
function permissionFilterChoices(actor: Actor, applications: readonly Application[]) {
  return applications
    .map((application) => ({
      id: application.id,
      name: application.name,
      permissions: isOrganisationScoped(actor) ? grantablePermissions(actor, application) : application.supportedPermissions,
    }))
    .filter((application) => application.permissions.length > 0);
}

/** The filters, without a permission filter the actor is not offered (it would tell who holds what they do not look after). */
async function offeredFilters(ctx: SignonContext, actor: Actor, query: UsersQuery): Promise<{ filters: UserFilters; applications: ReturnType<typeof permissionFilterChoices> }> {
  const filters = filtersOf(query);
  const applications = permissionFilterChoices(actor, await listLiveApplications(ctx.db));
  const offered = applications.some((application) => application.permissions.some((permission) => `${application.id}:${permission}` === filters.permission));
  return { filters: offered ? filters : { ...filters, permission: "" }, applications };
}

const twoStepFilterLabels = { on: "Set up", off: "Not set up", missing: "Required but not set up", exempt: "Exempt" } as const;

/** The list's address for a page, keeping the filters that are set. */
function pageHref(filters: UserFilters, page: number): string {
  const params = new URLSearchParams();
  const named: [string, string][] = [
    ["q", filters.text],
    ["role", filters.role],
    ["organisation", filters.organisation],
    ["status", filters.status],
    ["permission", filters.permission],
    ["two_step", filters.twoStep],
  ];
  for (const [name, value] of named) if (value !== "") params.set(name, value);
  if (page > 1) params.set("page", String(page));
  const query = params.toString();
  return query === "" ? "/users" : `/users?${query}`;
}

/** `GET /users`: the people the signed-in administrator may manage, filtered and paged. `GET /users.csv`: the same list as CSV. */
const userListRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/users", { config: { errorFormat: "html" }, schema: { querystring: UsersQuery }, preHandler: usersPageGuards }, async (request, reply) => {
    const actor = signedInUser(request);
    const { filters, applications } = await offeredFilters(app.signon, actor, request.query);
    const page = Number(request.query.page ?? "1");
    const { rows, hasNextPage } = await findManageableUsers(app.signon, actor, filters, page);
    const organisations = await listOrganisationChoices(app.signon.db);
    return renderPage(request, reply, "users/list.eta", {
      title: "Users",
      filters,
      roles: manageableScope(actor).scopeRoles,
      statuses: userStatuses,
      twoStepFilters: twoStepFilters.map((value) => ({ value, label: twoStepFilterLabels[value] })),
      // Closed organisations stay in the filter: their people are still listed.
      organisations: choosesOrganisation(actor) ? organisations.filter((organisation) => mayAssignOrganisation(actor, organisation.id)) : [],
      offersNoOrganisation: mayAssignOrganisation(actor, null),
      // Only the permissions the actor may grant: the rest are not theirs to look after.
      applications,
      roleLabels,
      users: rows.map((row) => ({ ...row, status: statusTags(app.signon, row), lastSignIn: formatTime(row.lastSignedInAt) })),
      page,
      firstNumber: (page - 1) * usersPerPage + 1,
      previousHref: page > 1 ? pageHref(filters, page - 1) : null,
      nextHref: hasNextPage ? pageHref(filters, page + 1) : null,
      csvHref: pageHref(filters, 1).replace(/^\/users/, "/users.csv"),
    });
  });

  app.get("/users.csv", { config: { errorFormat: "html" }, schema: { querystring: UsersQuery }, preHandler: usersPageGuards }, async (request, reply) => {
    const actor = signedInUser(request);
    const rows = await allManageableUsers(app.signon, actor, (await offeredFilters(app.signon, actor, request.query)).filters);
    const [applications, permissions] = await Promise.all([listLiveApplications(app.signon.db), permissionsOfUsers(app.signon.db, rows.map((row) => row.uid))]);
    return reply
      .header("content-type", "text/csv; charset=utf-8")
      .header("content-disposition", 'attachment; filename="users.csv"')
      .header("cache-control", "no-store")
      .send(usersCsv(rows.map((row) => ({ ...row, status: statusTags(app.signon, row) })), applications, permissions));
  });
};

export default userListRoutes;
