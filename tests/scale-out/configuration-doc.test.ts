// docs/configuration.md against the code: each table lists exactly the
// variables its service reads, and each literal default is what the service
// uses when the variable is unset. A variable added to a config reader (or
// read anywhere in a service's source) without a row here fails this test.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readConfig } from "@tessera/completion";
import { loadConfig } from "@tessera/signon";
import { describe, expect, it } from "vitest";
import { configFromEnv } from "../../examples/editorial-app/src/config.js";
import { readVariableTables } from "./support/doc-tables.js";
import { repositoryRoot } from "@tessera/test-support";
import { fallbackInSource, recordReads, sourceFiles, variablesNamedInSource } from "./support/variables-read.js";

type Env = Record<string, string | undefined>;

interface Service {
  /** The `## ` heading of its table in docs/configuration.md. */
  heading: string;
  /** Where it reads the environment. */
  sources: string[];
  /** Its configuration reader, when it has one, and environments that together make it read every variable it knows. */
  reader?: { read: (env: Env) => unknown; environments: Record<string, string>[] };
}

const root = (path: string) => join(repositoryRoot, path);
const somePostgres = "postgres://tessera@127.0.0.1:5432/tessera";
const services: Service[] = [
  {
    heading: "Sign-on",
    sources: sourceFiles(root("packages/signon/src")),
    reader: { read: (env) => loadConfig(env), environments: [{}, { DATABASE_URL: somePostgres }] },
  },
  {
    heading: "Completion",
    sources: sourceFiles(root("packages/completion/src")),
    reader: { read: (env) => readConfig(env as NodeJS.ProcessEnv), environments: [{}, { DATABASE_URL: somePostgres }] },
  },
  {
    heading: "Example application",
    sources: sourceFiles(root("examples/editorial-app/src")),
    reader: {
      read: (env) => configFromEnv(env, () => JSON.stringify({ client_id: "from-file", client_secret: "from-file" })),
      environments: [{ EDITORIAL_APP_CLIENT_ID: "editorial", EDITORIAL_APP_CLIENT_SECRET: "secret" }, { EDITORIAL_APP_CREDENTIALS_FILE: "/credentials.json" }],
    },
  },
  { heading: "npm start", sources: [root("scripts/start.mjs"), ...sourceFiles(root("scripts/start"))] },
];

const tables = readVariableTables(readFileSync(root("docs/configuration.md"), "utf8"));

describe("docs/configuration.md", () => {
  it("has one variable table per service, and nothing else", () => {
    expect([...tables.keys()]).toEqual(services.map((service) => service.heading));
  });

  for (const service of services) {
    const documented = tables.get(service.heading) ?? [];

    it(`lists exactly the variables ${service.heading} reads`, () => {
      const read = variablesNamedInSource(service.sources);
      for (const env of service.reader?.environments ?? []) for (const name of recordReads(env, service.reader!.read).names) read.add(name);
      expect(documented.map((row) => row.name).sort()).toEqual([...read].sort());
    });

    it(`gives ${service.heading}'s defaults as it applies them`, () => {
      const literal = documented.filter((row) => row.literalDefault !== null);
      // A reader's table states some defaults exactly, so this check has something to check.
      if (service.reader) expect(literal.length).toBeGreaterThan(0);
      for (const row of literal) {
        const value = row.literalDefault as string;
        const reader = service.reader;
        const base = reader?.environments[0] ?? {};
        if (reader && recordReads(base, reader.read).names.has(row.name)) {
          // Setting a variable to its documented default changes nothing.
          expect(reader.read({ ...base, [row.name]: value }), `${row.name}=${value}`).toEqual(reader.read(base));
        } else {
          expect(fallbackInSource(service.sources, row.name, value), `${row.name} falls back to "${value}" in ${service.heading}'s source`).toBe(true);
        }
      }
    });
  }
});
