// What ships, and how it is run: the built entry points of the services and command lines, and the
// Node.js options they run under. `npm start` (scripts/start.mjs) and every test suite that starts
// the system as shipped (tests/support) take them from here, so both run the same thing the same way.

/** The built entry points, relative to the repository root (docs/deployment.md names the same files). */
export const SHIPPED_ENTRIES = {
  signon: "packages/signon/dist/bundled/server.js",
  completion: "packages/completion/dist/bundled/server.js",
  editorial: "examples/editorial-app/dist/bundled/server.js",
  "signon-cli": "packages/signon/dist/bundled/cli.js",
  "completion-cli": "packages/completion/dist/bundled/cli.js",
};

/**
 * Node's options for the services and commands: workspace packages resolve to their dist/ (see their
 * package.json "exports"; the bundles hold them anyway); a young generation of at most 2 MB per half
 * instead of 16, which a service fills at its start (module loading) and then holds as resident memory
 * for good; and the heap ceiling of docs/deployment.md, under which garbage is collected before it
 * piles up.
 */
export const SHIPPED_NODE_OPTIONS = ["--conditions=tessera-built", "--max-semi-space-size=2", "--max-old-space-size=512"];

/** The workspace packages the services run from, built (dist/) before they start. */
export const BUILT_PACKAGES = ["packages/db", "packages/service-kit", "packages/signon-client", "packages/signon", "packages/completion", "examples/editorial-app"];
