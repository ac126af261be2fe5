// An application moved from GOV.UK Signon with `signon import from-signon` (the shipped command, from a Signon
// database on MariaDB made as Signon makes its rows), and the gds-sso style Ruby application left as it was: its old
// client id and secret, its old push endpoint, its API clients' old bearer tokens, and its people's old passwords.
// Needs Debian's Ruby libraries and mariadb-server; skipped without them, except under CI=true.
import { runShipped } from "@tessera/test-support";
import { activeRecordKeys, mariadbUnavailable, pepper, startMariadb, writeSignonFixture, type MariadbServer, type SignonFixture } from "@tessera/test-support/signon-database";
import { freePort } from "@tessera/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieBrowser } from "./support/browser.js";
import { rubyMissing, rubyPackages } from "./support/ruby.js";
import { startRubySystem, type RubySystem } from "./support/system.js";

const missing = rubyMissing() ?? mariadbUnavailable();
if (missing !== null) {
  const line = `ruby-client: the import test skipped, ${missing} (install with: apt-get install ${rubyPackages} mariadb-server)`;
  if (process.env.CI === "true") throw new Error(`${line}; CI must run these tests`);
  console.warn(line);
}

describe.skipIf(missing !== null)("a gds-sso style application moved from GOV.UK Signon, unchanged", () => {
  let mariadb: MariadbServer;
  let system: RubySystem;
  let fixture: SignonFixture;
  let importReport: Record<string, unknown>;

  beforeAll(async () => {
    mariadb = await startMariadb();
    const rubyPort = await freePort();
    const source = await mariadb.createDatabase("signon_production");
    // Signon knew the application at its callback, as gds-sso registers it.
    fixture = await writeSignonFixture(mariadb, "signon_production", { publisherRedirectUri: `http://127.0.0.1:${rubyPort}/auth/gds/callback` });
    system = await startRubySystem({
      rubyPort,
      env: { SIGNON_IMPORTED_PASSWORD_PEPPER: pepper },
      application: async (_signon, env) => {
        const run = await runShipped("signon-cli", ["import", "from-signon", source, "--json"], {
          ...env,
          ACTIVE_RECORD_ENCRYPTION_PRIMARY_KEY: activeRecordKeys.primaryKey,
          ACTIVE_RECORD_ENCRYPTION_KEY_DERIVATION_SALT: activeRecordKeys.derivationSalt,
        });
        if (run.code !== 0) throw new Error(`the import failed (${String(run.code)}): ${run.stderr}`);
        importReport = JSON.parse(run.stdout) as Record<string, unknown>;
        // The application keeps the client id and secret Signon gave it.
        return { clientId: fixture.publisher.clientId, secret: fixture.publisher.secret };
      },
    });
  }, 120_000);
  afterAll(async () => {
    await system?.close();
    await mariadb?.stop();
  });

  async function storedUser(uid: string): Promise<Record<string, unknown>> {
    return (await (await fetch(`${system.rubyUrl}/inspect/users/${uid}`)).json()) as Record<string, unknown>;
  }

  it("signs a person in with their Signon password through the application's old client id and secret", async () => {
    expect(importReport).toMatchObject({ counts: { applications: { created: 2 } } });
    const browser = new CookieBrowser({ email: fixture.erin.email, password: fixture.erin.password! });
    const { response, body } = await browser.visit(`${system.rubyUrl}/`);
    expect(response.status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ uid: fixture.erin.uid, email: fixture.erin.email, permissions: ["signin"], organisation_slug: "gds-publishing", disabled: false });
  });

  it("accepts an API client's old bearer token, checked through /user.json with the old client id", async () => {
    const accepted = await fetch(`${system.rubyUrl}/api/user`, { headers: { authorization: `Bearer ${fixture.publishingApi.token}` } });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ uid: fixture.publishingApi.uid, permissions: ["signin"] });
  });

  it("pushes a permission change, with a name Signon allowed, to the application's old push endpoint", async () => {
    await system.signon("permissions", "grant", "--email", fixture.erin.email, "--app", "Publisher", "--permissions", "GDS Editor");
    await expect.poll(async () => (await storedUser(fixture.erin.uid))["permissions"], { timeout: 15_000 }).toEqual(["GDS Editor", "signin"]);
  });

  it("signs the person out of the application when they are suspended", async () => {
    await system.signon("users", "suspend", "--email", fixture.erin.email, "--reason", "Moved on");
    await expect.poll(async () => storedUser(fixture.erin.uid), { timeout: 15_000 }).toMatchObject({ disabled: true, remotely_signed_out: true });
  });
});
