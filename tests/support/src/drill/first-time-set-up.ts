// First-time set-up for the load, as an operator does it: Sign-on's command line for the applications, the
// people, their permissions and Completion's tokens, and Completion's import for the course. Each drill passes
// the command line it runs (the running release's, for the rolling upgrade).
import type pg from "pg";
import { importSmallCourse } from "../load-support.js";

/** The course the Completion load writes to: one chapter, sequential and vertical over six problems. */
export const COURSE_KEY = "course-v1:FailoverX+HA101+2026";
export const PROBLEMS = Array.from({ length: 6 }, (_, n) => `block-v1:FailoverX+HA101+2026+type@problem+block@p${n}`);
export const LEARNERS = ["learner-0", "learner-1", "learner-2"];
export const PASSWORD = "failover correct horse battery";

/** Sign-on's command line with `--json`, returning the printed object: `signonCli(env, …)`, or `signonCliAt(release, env, …)`. */
export type SignonCommand = (...args: string[]) => Promise<Record<string, unknown>>;

/** What the set-up made for the load. */
export interface LoadAccounts {
  /** The OAuth client of the load's code flow. */
  oauthClient: { clientId: string; clientSecret: string; redirectUri: string };
  /** The editorial app's own client at Sign-on, for its configuration. */
  editorialClient: { clientId: string; clientSecret: string };
  /** Completion's client id at Sign-on. */
  completionClientId: string;
  /** The uids of the grid users, in the order of their addresses. */
  gridUsers: string[];
  /** A superadmin, and a person holding `signin` on the OAuth client. */
  adminEmail: string;
  userEmail: string;
  /** Bearer tokens of an API user holding signin, staff and admin on Completion: one for the writes, and the readers' two. */
  completionTokens: { writer: string; readers: [string, string] };
}

/**
 * Makes, with `cli`, the applications the load uses (the OAuth client `clientName`, redirecting to and pushing to
 * `receiverUrl`; the editorial app at `editorialUrl` with an `admin` permission; Completion with `staff` and
 * `admin`), a person per address of `gridEmails` (Grid 1, Grid 2, …), the superadmin, the person of the code flow
 * and Completion's API user with its permissions, and three of its tokens.
 */
export async function createLoadAccounts(cli: SignonCommand, options: { clientName: string; receiverUrl: string; editorialUrl: string; gridEmails: readonly string[] }): Promise<LoadAccounts> {
  const { clientName, receiverUrl, editorialUrl } = options;
  const adminEmail = "admin@example.org";
  const userEmail = "ada@example.org";
  const redirectUri = `${receiverUrl}/auth/gds/callback`;
  const [client, editorialApp, completionApp, ...gridUsers] = await Promise.all([
    cli("apps", "create", "--name", clientName, "--redirect-uri", redirectUri, "--push-base", receiverUrl),
    cli("apps", "create", "--name", "Editorial", "--redirect-uri", `${editorialUrl}/auth/gds/callback`, "--push-base", `${editorialUrl}/auth/gds/api`, "--permissions", "admin"),
    cli("apps", "create", "--name", "completion", "--redirect-uri", `${receiverUrl}/completion/callback`, "--push-base", receiverUrl, "--permissions", "staff,admin"),
    ...options.gridEmails.map((email, n) => cli("users", "create", "--email", email, "--name", `Grid ${n + 1}`, "--password", PASSWORD)),
  ]);
  await Promise.all([
    cli("users", "create", "--email", adminEmail, "--name", "Admin", "--password", PASSWORD, "--role", "superadmin"),
    cli("users", "create", "--email", userEmail, "--name", "Ada", "--password", PASSWORD),
    cli("api-users", "create", "--email", "loader@example.org", "--name", "Loader"),
  ]);
  await Promise.all([
    cli("permissions", "grant", "--email", userEmail, "--app", clientName, "--permissions", "signin"),
    cli("permissions", "grant", "--email", "loader@example.org", "--app", "completion", "--permissions", "signin,staff,admin"),
  ]);
  const [writer, reader1, reader2] = await Promise.all(
    [1, 2, 3].map(async () => String((await cli("tokens", "issue", "--email", "loader@example.org", "--app", "completion"))["access_token"])),
  );
  return {
    oauthClient: { clientId: String(client!["client_id"]), clientSecret: String(client!["client_secret"]), redirectUri },
    editorialClient: { clientId: String(editorialApp!["client_id"]), clientSecret: String(editorialApp!["client_secret"]) },
    completionClientId: String(completionApp!["client_id"]),
    gridUsers: gridUsers.map((user) => String(user["uid"])),
    adminEmail,
    userEmail,
    completionTokens: { writer: writer!, readers: [reader1!, reader2!] },
  };
}

/** Imports the course of the load into Completion at `completionUrl`, its learners enrolled, with an admin's `token`. */
export async function importLoadCourse(completionUrl: string, token: string): Promise<void> {
  await importSmallCourse(completionUrl, token, { key: COURSE_KEY, problems: PROBLEMS, learners: LEARNERS });
}

/** The id of the application called `name`, read from Sign-on's tables. */
export async function applicationId(pool: pg.Pool, name: string): Promise<string> {
  const { rows } = await pool.query<{ id: string }>("select id from signon.applications where name = $1", [name]);
  if (rows[0] === undefined) throw new Error(`no application ${name}`);
  return rows[0].id;
}
