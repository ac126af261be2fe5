import { sql } from "drizzle-orm";
import type { SignonDatabase } from "../../src/db/database.js";

/** What `generatePeople` made: its organisations and its application, for filters. */
export interface GeneratedPeople {
  organisationIds: string[];
  applicationId: string;
  /** An address of a generated person, for the exact e-mail search. */
  someEmail: string;
}

const firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret", "Ken", "Sophie", "Tim", "Radia", "Linus", "Katherine", "Dennis"];
const lastNames = [
  "Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Johnson", "Davies", "Robinson", "Wright", "Thompson", "Evans", "Walker", "White", "Roberts",
  "Green", "Hall", "Wood", "Jackson", "Clarke", "Patel", "Khan", "Lewis", "James", "Phillips", "Mason", "Mitchell", "Rose", "Davis", "Rodriguez", "Cox",
  "Alexander", "Garden", "Campbell", "Johnston", "Moore", "Smyth", "Okafor", "Nguyen", "Kowalski",
];

/**
 * Fills a migrated Sign-on database with `count` people through SQL
 * (`generate_series`), shaped like a large deployment: 100 organisations (one
 * in ten requiring 2-step verification), 1 in 20 people without one; roles
 * mostly normal, 1 in 50 organisation admins, 1 in 200 super organisation
 * admins, 1 in 1,000 admins; 1 in 10 invited (no password), 1 in 25
 * suspended, 1 in 5,000 locked, 1 in 8 with 2-step verification, 1 in 2,000
 * exempt; `signin` on one application for half of them and `editor` for 1 in
 * 200, each attribute drawn independently (a hash of the person's number).
 * Names are a first name, a middle initial, a last name (1 in 40 is a
 * Smith) and a number; addresses `personN@…`. Then ANALYZE, so the planner knows the sizes.
 */
export async function generatePeople(db: SignonDatabase, count: number, slice = 20_000): Promise<GeneratedPeople> {
  const organisations = await db.execute<{ id: string }>(sql`
    insert into signon.organisations (id, slug, name, content_id, two_step_required, created_at)
    select gen_random_uuid(), 'generated-' || o, 'Generated organisation ' || o, gen_random_uuid(), o % 10 = 0, now()
    from generate_series(1, 100) o
    returning id`);
  const organisationIds = organisations.rows.map((row) => row.id);
  const [application] = (
    await db.execute<{ id: string }>(sql`
      insert into signon.applications (id, name, client_id, client_secret_hash, redirect_uris, supported_permissions, created_at)
      values (gen_random_uuid(), 'Generated application', 'generated-' || gen_random_uuid(), 'x', array['https://generated.example/cb'], array['signin', 'editor'], now())
      returning id`)
  ).rows;
  const applicationId = (application as { id: string }).id;
  const firsts = sql.raw(`array[${firstNames.map((name) => `'${name}'`).join(",")}]`);
  const lasts = sql.raw(`array[${lastNames.map((name) => `'${name}'`).join(",")}]`);
  const organisationArray = `{${organisationIds.join(",")}}`;
  // In slices, so that no one statement runs into the pool's read time-out while the indexes take the rows.
  for (let from = 1; from <= count; from += slice) {
    const to = Math.min(count, from + slice - 1);
    await db.execute(sql`
    insert into signon.users (uid, name, email, role, organisation_id, password_hash, suspended_at, suspension_reason, locked_at,
                              last_signed_in_at, otp_enabled_at, two_step_required, two_step_exemption_reason, two_step_exempt_until, created_at, updated_at)
    -- Each attribute drawn from its own hash of the person's number, so that none follows another or the order of names.
    select gen_random_uuid(),
           (${firsts})[1 + (hashtext('first' || n) & 2147483647) % ${firstNames.length}] || ' ' || chr(65 + (hashtext('initial' || n) & 2147483647) % 26) || '. ' || (${lasts})[1 + (hashtext('last' || n) & 2147483647) % ${lastNames.length}] || ' ' || n,
           'person' || n || '@' || (array['example.org', 'example.com', 'dept.example', 'agency.example'])[1 + n % 4],
           case when (hashtext('role' || n) & 2147483647) % 1000 = 0 then 'admin' when (hashtext('role' || n) & 2147483647) % 200 = 0 then 'super_organisation_admin' when (hashtext('role' || n) & 2147483647) % 50 = 0 then 'organisation_admin' else 'normal' end,
           case when (hashtext('organisation' || n) & 2147483647) % 20 = 0 then null else (${organisationArray}::uuid[])[1 + (hashtext('organisation' || n) & 2147483647) / 20 % 100] end,
           case when (hashtext('invited' || n) & 2147483647) % 10 = 0 then null else 'generated' end,
           case when (hashtext('suspended' || n) & 2147483647) % 25 = 0 then now() - interval '1 day' end,
           case when (hashtext('suspended' || n) & 2147483647) % 25 = 0 then 'Generated' end,
           case when (hashtext('locked' || n) & 2147483647) % 5000 = 0 then now() end,
           case when (hashtext('signed-in' || n) & 2147483647) % 3 = 0 then now() - ((hashtext('signed-in' || n) & 2147483647) % 90) * interval '1 day' end,
           case when (hashtext('two-step' || n) & 2147483647) % 8 = 0 then now() end,
           (hashtext('required' || n) & 2147483647) % 500 = 0,
           case when (hashtext('exempt' || n) & 2147483647) % 2000 = 0 then 'Generated' end,
           case when (hashtext('exempt' || n) & 2147483647) % 2000 = 0 then now() + interval '30 days' end,
           now() - (n % 1000) * interval '1 hour', now()
    from generate_series(${from}::int, ${to}::int) n`);
  }
  for (const [permission, share] of [["signin", 2], ["editor", 100]] as const) {
    await db.execute(sql`
      insert into signon.user_permissions (user_uid, application_id, permission, created_at)
      select uid, ${applicationId}::uuid, ${permission}, now() from signon.users where hashtext(uid::text) % ${share} = ${share === 2 ? 0 : 5}`);
  }
  await db.execute(sql`analyze signon.users`);
  await db.execute(sql`analyze signon.user_permissions`);
  await db.execute(sql`analyze signon.organisations`);
  return { organisationIds, applicationId, someEmail: `person${Math.ceil(count / 2)}@${["example.org", "example.com", "dept.example", "agency.example"][Math.ceil(count / 2) % 4]}` };
}
