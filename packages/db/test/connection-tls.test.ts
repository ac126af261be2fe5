import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionTls, productionTlsProblem, unusableTlsFile } from "../src/connection-tls.js";

describe("connectionTls", () => {
  it("reads libpq's TLS parameters from the URL", () => {
    expect(connectionTls("postgres://signon:secret@db.internal/signon?sslmode=verify-full&sslrootcert=%2Fetc%2Ftessera%2Ftls%2Fca.crt&sslcert=/c.crt&sslkey=/c.key")).toEqual({
      server: "db.internal:5432",
      local: false,
      sslmode: "verify-full",
      libpqCompat: false,
      rootCert: "/etc/tessera/tls/ca.crt",
      cert: "/c.crt",
      key: "/c.key",
    });
    expect(connectionTls("postgres://db.internal:6432/x?sslmode=require&uselibpqcompat=true")).toMatchObject({ server: "db.internal:6432", sslmode: "require", libpqCompat: true, rootCert: null });
  });

  it.each([
    ["a Unix socket (the embedded database)", "postgres://postgres@localhost:5432/tessera?host=%2Fsrv%2Ftessera%2Fdata", true],
    ["localhost", "postgres://u@localhost:5432/x", true],
    ["127.0.0.1", "postgres://u@127.0.0.1:5000/x", true],
    ["another 127/8 address", "postgres://u@127.0.1.1/x", true],
    ["::1", "postgres://u@[::1]:5432/x", true],
    ["no host", "postgres:///x", true],
    ["a name", "postgres://u@db.internal/x", false],
    ["another address", "postgres://u@10.0.0.11/x", false],
    ["a host parameter naming another machine", "postgres://u@localhost/x?host=db.internal", false],
  ])("takes %s for this machine: %s", (_name, url, local) => {
    expect(connectionTls(url).local).toBe(local);
  });
});

describe("productionTlsProblem", () => {
  it.each([
    "postgres://u@db.internal/x?sslmode=verify-full&sslrootcert=/etc/tessera/tls/ca.crt",
    "postgres://u@db.internal/x?sslmode=verify-full",
    "postgres://u@db.internal/x?sslmode=verify-ca&uselibpqcompat=true&sslrootcert=/etc/tessera/tls/ca.crt",
    "postgres://u@localhost/x",
    "postgres://u@127.0.0.1:5000/x?sslmode=disable",
    "postgres://postgres@localhost:5432/tessera?host=%2Fsrv%2Fdata",
  ])("allows %s", (url) => {
    expect(productionTlsProblem(url)).toBeNull();
  });

  it("refuses clear text to another machine, with or without sslmode=disable", () => {
    expect(productionTlsProblem("postgres://u@db.internal/x")).toBe(
      "reaches db.internal:5432 without TLS (it has no sslmode): in production, add sslmode=verify-full&sslrootcert=<the deployment's CA certificate> to it, " +
        "or reach a server on this machine through a Unix socket or a loopback address",
    );
    expect(productionTlsProblem("postgres://u@10.0.0.11:5432/x?sslmode=disable")).toMatch(/^reaches 10\.0\.0\.11:5432 without TLS \(sslmode=disable\): /);
  });

  it.each(["prefer", "require", "no-verify", "allow"])("refuses sslmode=%s, which does not promise a checked certificate", (sslmode) => {
    expect(productionTlsProblem(`postgres://u@db.internal/x?sslmode=${sslmode}`)).toBe(
      `asks for sslmode=${sslmode}, which does not promise that the certificate of db.internal:5432 is checked (libpq does not check it, nor will node-postgres 9): ` +
        "in production, use sslmode=verify-full&sslrootcert=<the deployment's CA certificate> instead, or reach a server on this machine through a Unix socket or a loopback address",
    );
  });
});

describe("unusableTlsFile", () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "tessera-tls-files-"));
    await writeFile(join(folder, "not-pem.crt"), "hello\n");
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it("is null for a URL without TLS files", () => {
    expect(unusableTlsFile("postgres://u@db.internal/x?sslmode=verify-full", "DATABASE_URL")).toBeNull();
  });

  it("names the setting, the parameter and the path of a file that cannot be read or holds no PEM", () => {
    expect(unusableTlsFile(`postgres://u@db.internal/x?sslmode=verify-full&sslrootcert=${folder}/absent.crt`, "DATABASE_URL")).toBe(
      `The sslrootcert of DATABASE_URL, ${folder}/absent.crt, cannot be read (no such file): put the deployment's CA certificate there (ca.crt of make-certificates.sh) or correct the path`,
    );
    expect(unusableTlsFile(`postgres://u@db.internal/x?sslmode=verify-full&sslcert=${folder}`, "DATABASE_READ_URL")).toBe(
      `The sslcert of DATABASE_READ_URL, ${folder}, cannot be read (it is a folder): put this machine's certificate there or correct the path`,
    );
    expect(unusableTlsFile(`postgres://u@db.internal/x?sslmode=verify-full&sslkey=${folder}/not-pem.crt`, "DATABASE_URL")).toBe(
      `The sslkey of DATABASE_URL, ${folder}/not-pem.crt, does not hold an unencrypted PEM private key: put this machine's private key there, readable by this service's user only, or correct the path`,
    );
  });

  it("says that libpq's sslrootcert=system is not node-postgres's", () => {
    expect(unusableTlsFile("postgres://u@db.internal/x?sslmode=verify-full&sslrootcert=system", "DATABASE_URL")).toMatch(/^DATABASE_URL has sslrootcert=system, which node-postgres takes for a file name: /);
  });
});
