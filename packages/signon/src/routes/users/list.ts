import { Type, type FastifyPluginAsyncTypebox, type Static } from "@fastify/type-provider-typebox";
import { countManageableUsers, exactCountLimit, findManageableUsers, manageableScope, resolvedSearch, shownCount, statusTags, type UserFilters } from "../../accounts/user-search.js";
import { csvBatchSize, usersCsvStream } from "../../accounts/users-csv.js";
import { choosesOrganisation } from "../../accounts/user-form.js";
import { toUserExportRow, twoStepFilters, userStatuses } from "../../repositories/user-search.js";
import { exportStatement } from "../../user-search/read.js";
import { KeysetQuery, keysetLinks, keysetPosition } from "../../web/keyset-links.js";
import { listLiveApplications, listOrganisationChoices } from "../../repositories/user-form-choices.js";
import { renderPage } from "../../web/page.js";
import type { SignonContext } from "../../context.js";
import type { Application } from "../../repositories/applications.js";
import { mayAssignOrganisation, type Actor } from "../../web/policy.js";
import { applicationsOffered, filterablePermissions } from "../../accounts/offered-permissions.js";
import { signedInUser } from "../../web/signed-in.js";
import { formatTime, roleLabels } from "./format.js";
import { usersPageGuards } from "./managed-user.js";
import { readingContext } from "../../context.js";
import { ownRecentChange } from "../../http/recent-write-cookie.js";

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
    // A permission name: Sign-on's own, or one brought from GOV.UK Signon ("GDS Editor").
    permission: Type.Optional(Type.String({ pattern: `^(|${uuid}:[^\\u0000-\\u001f,]{1,255})$` })),
    two_step: Type.Optional(Type.Union([Type.Literal(""), ...twoStepFilters.map((filter) => Type.Literal(filter))])),
    // `after` or `before` a person's key, or `last=yes`.
    ...KeysetQuery.properties,
  },
  { additionalProperties: false },
);
type UsersQuery = Static<typeof UsersQuery>;

function filtersOf(query: UsersQuery): UserFilters {
  return {
    // Composed (NFC), as browsers send what is typed: "E" and a combining diaeresis searches as "Ë".
    text: (query.q ?? "").normalize("NFC"),
    role: query.role ?? "",
    organisation: query.organisation?.toLowerCase() ?? "",
    status: query.status ?? "",
    permission: query.permission ? query.permission.replace(/^[^:]+/, (id) => id.toLowerCase()) : "",
    twoStep: query.two_step ?? "",
  };
}

/** The permissions the actor may filter by (see `filterablePermissions`), by application. */
function permissionFilterChoices(actor: Actor, applications: readonly Application[]) {
  return applicationsOffered(actor, applications, filterablePermissions).map(({ application, permissions }) => ({ id: application.id, name: application.name, permissions }));
}

/** The filters, without a permission filter the actor is not offered (it would tell who holds what they do not look after). */
async function offeredFilters(ctx: SignonContext, actor: Actor, query: UsersQuery): Promise<{ filters: UserFilters; applications: ReturnType<typeof permissionFilterChoices> }> {
  const filters = filtersOf(query);
  const applications = permissionFilterChoices(actor, await listLiveApplications(ctx.db));
  const offered = applications.some((application) => application.permissions.some((permission) => `${application.id}:${permission}` === filters.permission));
  return { filters: offered ? filters : { ...filters, permission: "" }, applications };
}

const twoStepFilterLabels = { on: "Set up", off: "Not set up", missing: "Required but not set up", exempt: "Exempt" } as const;

/** The filters that are set, as the list's links carry them. */
function filterParams(filters: UserFilters): URLSearchParams {
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
  return params;
}

/** `GET /users`: the people the signed-in administrator may manage, filtered, by name, a page at a time (keyset). `GET /users.csv`: the same list as CSV. */
const userListRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/users", { config: { errorFormat: "html", listRead: true }, schema: { querystring: UsersQuery }, preHandler: usersPageGuards }, async (request, reply) => {
    const actor = signedInUser(request);
    const position = keysetPosition(request.query);
    if (position === null) {
      return renderPage(request, reply, "error.eta", { title: "Bad request", message: "Ask for one page: after a person, before one, or the last." }, 400);
    }
    // A list: read where reads that tolerate a little lag go (a replica, when configured).
    const reading = readingContext(app.signon, ownRecentChange(request, app.signon.config));
    const { filters, applications } = await offeredFilters(reading, actor, request.query);
    const search = await resolvedSearch(reading, actor, filters);
    const [page, counted, organisations] = await Promise.all([
      findManageableUsers(reading, search, position),
      countManageableUsers(reading, search),
      listOrganisationChoices(reading.db),
    ]);
    const total = shownCount(counted, page, position.kind === "first");
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
      users: page.rows.map((row) => ({ ...row, status: statusTags(app.signon, row), lastSignIn: formatTime(row.lastSignedInAt) })),
      total,
      exactCountLimit,
      ...keysetLinks("/users", page, filterParams(filters)),
      csvHref: filterParams(filters).size > 0 ? `/users.csv?${filterParams(filters).toString()}` : "/users.csv",
    });
  });

  app.get("/users.csv", { config: { errorFormat: "html", listRead: true }, schema: { querystring: UsersQuery }, preHandler: usersPageGuards }, async (request, reply) => {
    const actor = signedInUser(request);
    const ctx = readingContext(app.signon, ownRecentChange(request, app.signon.config));
    const search = await resolvedSearch(ctx, actor, (await offeredFilters(ctx, actor, request.query)).filters);
    // A column per application the list may be filtered by, holding only those permissions: the same rule as the filter.
    const columns = applicationsOffered(actor, await listLiveApplications(ctx.db), filterablePermissions);
    // Filters that match nobody, as the bounded count proves, answer the header alone without reading the list.
    const total = await countManageableUsers(ctx, search);
    const nobody = total.exact && total.count === 0;
    async function* people() {
      if (nobody) return;
      for await (const batch of ctx.statements.cursor(exportStatement(ctx.db, search), csvBatchSize)) {
        yield batch.map((raw) => {
          const row = toUserExportRow(raw);
          return Object.assign(row, { status: statusTags(ctx, row) });
        });
      }
    }
    return reply
      .header("content-type", "text/csv; charset=utf-8")
      .header("content-disposition", 'attachment; filename="users.csv"')
      .header("cache-control", "no-store")
      .send(usersCsvStream(people(), columns));
  });
};

export default userListRoutes;
