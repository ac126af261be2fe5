// What `npm start` is told: its command-line arguments (only --help) and the variables it reads itself.
// Everything else in the environment passes on to the services unchanged.
import { parseArgs } from "node:util";

/** A mistake in how `npm start` was called: the message is printed as it is, without a stack trace. */
export class StartError extends Error {
  /** @param {string} message @param {number} exitCode */
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

export const HELP = `Usage: npm start [-- --help]

Runs Sign-on, Completion and the example application on this machine, on the
embedded database in ./data (or on DATABASE_URL), until Ctrl-C. The first start
sets the installation up and prints a superadmin password and an API token once.

Settings (environment variables):
  HOST                 address all three listen on              (default 127.0.0.1)
  SIGNON_PORT          Sign-on's port                           (default 3000)
  COMPLETION_PORT      Completion's port                        (default 3001)
  EDITORIAL_APP_PORT   the example application's port           (default 3002)
  TESSERA_ADMIN_EMAIL  the superadmin the first start creates   (default admin@example.com)
  TESSERA_LOG_FORMAT   pretty (readable lines) or json          (default pretty on a terminal, else json)

Every other variable of docs/configuration.md passes on to the services, e.g.
DATABASE_URL for all three. PORT is refused: two services would read it.

Example: SIGNON_PORT=3100 COMPLETION_PORT=3101 EDITORIAL_APP_PORT=3102 npm start
`;

/** @param {string} name @param {string} text */
function port(name, text) {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(value) || value < 1 || value > 65535) {
    throw new StartError(`npm start: ${name} must be a port number from 1 to 65535; got "${text}".`, 2);
  }
  return value;
}

/** The host to put in URLs for an address to listen on: a wildcard address is reached on loopback. */
function urlHost(host) {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Reads `npm start`'s settings. Returns `{ help: true }` for `--help`; throws
 * `StartError` for arguments or values it cannot use.
 * @param {string[]} argv the arguments after the script
 * @param {Record<string, string | undefined>} env
 * @param {boolean} stdoutIsTerminal
 */
export function readSettings(argv, env, stdoutIsTerminal) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false });
  } catch (error) {
    throw new StartError(`npm start: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`, 2);
  }
  if (parsed.values.help) return { help: true };
  if (env.PORT) {
    throw new StartError(
      `npm start: PORT is set (${env.PORT}), but Completion and the example application would both read it.\n` +
        "Set COMPLETION_PORT and EDITORIAL_APP_PORT instead (npm start -- --help lists the settings).",
      2,
    );
  }
  const host = env.HOST || "127.0.0.1";
  const ports = {
    signon: port("SIGNON_PORT", env.SIGNON_PORT || "3000"),
    completion: port("COMPLETION_PORT", env.COMPLETION_PORT || "3001"),
    editorial: port("EDITORIAL_APP_PORT", env.EDITORIAL_APP_PORT || "3002"),
  };
  if (new Set(Object.values(ports)).size < 3) {
    throw new StartError(`npm start: SIGNON_PORT, COMPLETION_PORT and EDITORIAL_APP_PORT must differ; got ${Object.values(ports).join(", ")}.`, 2);
  }
  const logFormat = env.TESSERA_LOG_FORMAT || (stdoutIsTerminal ? "pretty" : "json");
  if (logFormat !== "pretty" && logFormat !== "json") {
    throw new StartError(`npm start: TESSERA_LOG_FORMAT must be pretty or json; got "${logFormat}".`, 2);
  }
  const reach = urlHost(host);
  // Sign-on is reached on localhost and the others on 127.0.0.1 by default, so the browser keeps their cookies apart.
  const signonPublicUrl = env.SIGNON_PUBLIC_URL || `http://${host === "127.0.0.1" ? "localhost" : reach}:${ports.signon}`;
  return {
    help: false,
    host,
    ports,
    logFormat,
    adminEmail: env.TESSERA_ADMIN_EMAIL || undefined,
    urls: {
      /** Where browsers (and the example application) reach Sign-on. */
      signonPublic: signonPublicUrl.replace(/\/+$/, ""),
      /** Where Completion asks Sign-on about tokens. */
      signon: `http://${reach}:${ports.signon}`,
      completion: `http://${reach}:${ports.completion}`,
      editorial: `http://${reach}:${ports.editorial}`,
    },
  };
}
