import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditEvents, identityProviders } from "../../src/db/schema.js";
import { openSecret } from "../../src/security/secret-box.js";
import { runBuiltSignonCli } from "../support/built-cli.js";
import { runSignonCli } from "../support/cli.js";
import { startSamlIdentityProvider } from "@tessera/test-support/saml-identity-provider";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
const key = Buffer.from("5e".repeat(32), "hex");
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "signon-idp-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
  await database.close();
});
beforeEach(async () => {
  await database.reset();
  await runSignonCli(database.url, ["organisations", "create", "--slug", "dept", "--name", "Department"], { SIGNON_SECRET_KEY: "5e".repeat(32) });
});

const signon = (...argv: string[]) => runBuiltSignonCli(database.url, argv);

describe("signon identity-providers (the built command)", () => {
  it("connects an organisation with the secret from a file, prints where to register Sign-on, and never the secret", async () => {
    const secretFile = join(folder, "secret");
    await writeFile(secretFile, "the-client-secret\n", { mode: 0o600 });
    const connected = await signon(
      "identity-providers", "connect", "dept", "--issuer", "https://login.example.net/tenant/v2.0", "--client-id", "sign-on",
      "--client-secret-file", secretFile, "--domains", "dept.example.gov.uk,Dept.example.org", "--password-addresses", "break-glass@dept.example.gov.uk",
      "--suspend-unseen-days", "30", "--json",
    );
    expect(connected).toMatchObject({ code: 0, stderr: "" });
    const answer = JSON.parse(connected.stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({
      organisation: "dept",
      created: true,
      issuer: "https://login.example.net/tenant/v2.0",
      client_authentication: "client_secret_basic",
      domains: ["dept.example.gov.uk", "dept.example.org"],
      password_addresses: ["break-glass@dept.example.gov.uk"],
      suspend_unseen_days: 30,
      redirect_uri: "http://localhost:3000/sign-in/upstream/callback",
      backchannel_logout_uri: `http://localhost:3000/sign-in/upstream/${String(answer["id"])}/backchannel-logout`,
    });
    expect(connected.stdout).not.toContain("the-client-secret");
    const [stored] = await database.db.select().from(identityProviders);
    expect(openSecret(key, stored!.clientCredentialSealed!)).toBe("the-client-secret");

    const shown = await signon("identity-providers", "show", "dept");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("issuer: https://login.example.net/tenant/v2.0");
    expect(shown.stdout).not.toContain("the-client-secret");
    const listed = await signon("identity-providers", "list", "--json");
    expect(listed, listed.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(listed.stdout)).toMatchObject({ providers: [{ organisation: "dept" }] });
    const [event] = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "identity_provider_connected"));
    expect(JSON.stringify(event?.details)).not.toContain("the-client-secret");

    const disconnected = await signon("identity-providers", "disconnect", "dept");
    expect(disconnected).toMatchObject({ code: 0 });
    expect(disconnected.stdout).toContain("Disconnected Department");
    expect(await database.db.select().from(identityProviders)).toEqual([]);
    expect(await signon("identity-providers", "disconnect", "dept")).toMatchObject({ code: 1 });
  });

  it("takes private_key_jwt with a key and its certificate from files, keeping the key sealed", async () => {
    const keyFile = join(folder, "key.pem");
    const certificateFile = join(folder, "certificate.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certificateFile, "-days", "2", "-subj", "/CN=signon-upstream-client"], { stdio: "ignore" });
    const connected = await signon(
      "identity-providers", "connect", "dept", "--issuer", "https://idp.example.org/realms/dept", "--client-id", "signon",
      "--client-authentication", "private_key_jwt", "--private-key-file", keyFile, "--certificate-file", certificateFile, "--domains", "dept.example.org",
    );
    expect(connected).toMatchObject({ code: 0, stderr: "" });
    const [stored] = await database.db.select().from(identityProviders);
    expect(openSecret(key, stored!.clientCredentialSealed!)).toContain("BEGIN PRIVATE KEY");
    expect(stored!.clientCertificate).toContain("BEGIN CERTIFICATE");
    expect(JSON.stringify(stored)).not.toContain((await readFile(keyFile, "utf8")).split("\n")[1]);
  });

  it("connects an organisation to a SAML identity provider from its metadata, printing what to register there", async () => {
    const idp = await startSamlIdentityProvider("http://localhost:3000/sign-in/upstream/saml/metadata");
    try {
      const metadataFile = join(folder, "idp-metadata.xml");
      await writeFile(metadataFile, idp.metadata);
      const connected = await signon("identity-providers", "connect-saml", "dept", "--metadata-file", metadataFile, "--domains", "dept.example.org", "--json");
      expect(connected).toMatchObject({ code: 0, stderr: "" });
      const answer = JSON.parse(connected.stdout) as Record<string, unknown>;
      expect(answer).toMatchObject({
        protocol: "saml",
        entity_id: idp.entityId,
        sso_url: idp.signOnUrl,
        certificates: 1,
        sp_entity_id: "http://localhost:3000/sign-in/upstream/saml/metadata",
        acs_url: "http://localhost:3000/sign-in/upstream/saml/acs",
        single_logout_url: `http://localhost:3000/sign-in/upstream/${String(answer["id"])}/saml/logout`,
      });
      const [stored] = await database.db.select().from(identityProviders);
      expect(stored?.samlCertificates?.[0]).toContain("BEGIN CERTIFICATE");
      // One that wants signed requests, while Sign-on has no signing key: refused, saying what to set.
      await writeFile(metadataFile, idp.signedRequestsMetadata);
      const refused = await signon("identity-providers", "connect-saml", "dept", "--metadata-file", metadataFile, "--domains", "dept.example.org");
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("SIGNON_SAML_SIGNING_KEY");
      await writeFile(metadataFile, "<not-metadata/>");
      expect((await signon("identity-providers", "connect-saml", "dept", "--metadata-file", metadataFile, "--domains", "dept.example.org")).stderr).toContain("is not a SAML 2.0 identity provider's");
    } finally {
      await idp.close();
    }
  });

  it("refuses what it cannot keep, with the usage and exit code 2", async () => {
    const refused = await signon("identity-providers", "connect", "dept", "--issuer", "http://login.example.net", "--client-id", "c", "--domains", "dept.example.org");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("The issuer must be an https URL.");
    const consumer = await runBuiltSignonCli(database.url, ["identity-providers", "connect", "dept", "--issuer", "https://login.example.net", "--client-id", "c", "--domains", "gmail.com"], {
      SIGNON_UPSTREAM_CLIENT_SECRET: "from-the-environment",
    });
    expect(consumer.stderr).toContain("gmail.com is a public mail service");
    const noSecret = await signon("identity-providers", "connect", "dept", "--issuer", "https://login.example.net", "--client-id", "c", "--domains", "dept.example.org");
    expect(noSecret.stderr).toContain("Give the client secret the provider gave Sign-on.");
    // A secret is never taken on the command line, where every user of the machine sees it.
    const onTheLine = await signon("identity-providers", "connect", "dept", "--issuer", "https://login.example.net", "--client-id", "c", "--domains", "dept.example.org", "--client-secret", "x");
    expect(onTheLine.code).toBe(2);
    expect(await signon("identity-providers", "show", "nowhere")).toMatchObject({ code: 2 });
    expect(await database.db.select().from(identityProviders)).toEqual([]);
  });
});
