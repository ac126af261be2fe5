import type { FastifyInstance } from "fastify";
import type pg from "pg";
import { listKnownUsers } from "../repositories/known-users.js";
import { escapeHtml, page } from "../views/layout.js";

/** `GET /admin` (permission `admin`): the users Sign-on has told this application about. */
export function adminRoutes(pool: pg.Pool) {
  return async function admin(app: FastifyInstance): Promise<void> {
    app.get("/admin", { preHandler: app.signonClient.requirePermission("admin") }, async (request, reply) => {
      const rows = (await listKnownUsers(pool))
        .map(
          (user) =>
            `<tr><td>${escapeHtml(user.name)}</td><td>${escapeHtml(user.email)}</td>` +
            `<td>${user.permissions.map((p) => `<code>${escapeHtml(p)}</code>`).join(" ")}</td>` +
            `<td>${user.disabled ? "suspended" : user.remotelySignedOut ? "signed out by Sign-on" : "active"}</td></tr>`,
        )
        .join("\n");
      const body = `<p>Users Sign-on has told this application about, with their permissions here.</p>
<div class="table-wrap"><table id="users"><thead><tr><th>Name</th><th>E-mail</th><th>Permissions</th><th>State</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>`;
      return reply
        .type("text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .send(page("Admin", body, request.signonUser?.name));
    });
  };
}
