/** A host pattern as given to `signon apps rewrite-uris --from` or `--to`. */
export interface HostPattern {
  /** `http` or `https`, or `null` when the pattern names no scheme (any scheme; kept when rewriting). */
  scheme: string | null;
  /** The host in lower case; for a wildcard pattern, the domain after `*.`. */
  host: string;
  /** `*.domain`: every host under the domain (one label or more before it), not the domain itself. */
  wildcard: boolean;
  /** The port, or `null` when the pattern names none. */
  port: number | null;
  /** The pattern as given, for messages and the event log. */
  text: string;
}

/** A pattern that is not a host: the message says why. */
export class HostPatternError extends Error {}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const defaultPorts: Record<string, number> = { http: 80, https: 443 };

/** The host as compared: lower case, an IPv6 address in its shortest form; `null` when it is not a host. */
function normalHost(host: string): string | null {
  const lower = host.toLowerCase();
  if (lower.startsWith("[") && lower.endsWith("]")) {
    try {
      return new URL(`http://${lower}/`).hostname;
    } catch {
      return null;
    }
  }
  return ipv4.test(lower) || (lower.length <= 253 && lower.split(".").every((part) => label.test(part))) ? lower : null;
}

/**
 * Reads a host pattern: `[http://|https://]host[:port]`, where host is a DNS
 * name, an IPv4 address, a bracketed IPv6 address, or `*.domain` for every
 * host under a domain. Nothing else: no path, no user name, no wildcard
 * elsewhere.
 *
 * @throws HostPatternError saying what is wrong.
 */
export function parseHostPattern(text: string, option: string): HostPattern {
  const given = text.trim();
  if (given === "") throw new HostPatternError(`${option} is empty: give a host, for example publisher.example.org or *.example.org`);
  const match = /^(?:([A-Za-z][A-Za-z0-9+.-]*):\/\/)?(.*)$/s.exec(given);
  const scheme = match?.[1]?.toLowerCase() ?? null;
  const rest = match?.[2] ?? "";
  if (scheme !== null && !(scheme in defaultPorts)) throw new HostPatternError(`${option} ${given}: the scheme is http or https, not ${scheme}`);
  if (/[/?#@\s]/.test(rest)) throw new HostPatternError(`${option} ${given} is not a host: give the host alone (with a port if needed), no path, user name or spaces`);
  const hostAndPort = (rest.startsWith("[") ? /^(\[[^\]]+\])(?::(\d{1,5}))?$/ : /^([^:]*)(?::(\d{1,5}))?$/).exec(rest);
  if (!hostAndPort) throw new HostPatternError(`${option} ${given}: a port is a number from 1 to 65535, after the host`);
  const port = hostAndPort[2] === undefined ? null : Number(hostAndPort[2]);
  if (port !== null && (port < 1 || port > 65535)) throw new HostPatternError(`${option} ${given}: a port is a number from 1 to 65535`);
  const named = hostAndPort[1] ?? "";
  const wildcard = named.startsWith("*.");
  const written = wildcard ? named.slice(2) : named;
  if (written.includes("*")) throw new HostPatternError(`${option} ${given}: a wildcard stands only at the start, as *.example.org`);
  const host = normalHost(written);
  if (host === null) throw new HostPatternError(`${option} ${given} is not a host name, IPv4 address or [IPv6] address`);
  if (wildcard && (ipv4.test(host) || host.startsWith("["))) throw new HostPatternError(`${option} ${given}: a wildcard covers the hosts under a domain name, not an address`);
  return { scheme, host, wildcard, port, text: given };
}

/** The pair of patterns a rewrite uses, checked together. */
export interface HostRewrite {
  from: HostPattern;
  to: HostPattern;
}

/**
 * Checks `--from` and `--to` together: a wildcard `--to` needs a wildcard
 * `--from` (the hosts' own labels are carried over), and the two must differ.
 */
export function hostRewrite(fromText: string, toText: string): HostRewrite {
  const from = parseHostPattern(fromText, "--from");
  const to = parseHostPattern(toText, "--to");
  if (to.wildcard && !from.wildcard) throw new HostPatternError("--to is *.domain only when --from is too: there are no labels to carry over from a single host");
  if (from.scheme === to.scheme && from.host === to.host && from.wildcard === to.wildcard && from.port === to.port) {
    throw new HostPatternError("--from and --to are the same: there is nothing to rewrite");
  }
  return { from, to };
}

/**
 * `uri` with its scheme and host rewritten by `rewrite`, or `null` when its
 * host does not match `--from`. Only the part before the path changes; the
 * path, query and fragment stay exactly as written. The scheme is `--to`'s,
 * else the URI's own. The port is `--to`'s; without one, it is dropped when
 * `--from` named a port, else kept. A wildcard `--to` keeps the labels that
 * `--from`'s `*` matched.
 */
export function rewriteUri(uri: string, rewrite: HostRewrite): string | null {
  const parts = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s.exec(uri);
  if (!parts) return null;
  const [, scheme = "", authority = "", tail = ""] = parts;
  // A URI with a user name is never registered (see redirectUriProblem); left alone rather than guessed at.
  if (authority.includes("@")) return null;
  const hostPort = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(authority);
  if (!hostPort) return null;
  const writtenHost = hostPort[1] ?? "";
  const host = normalHost(writtenHost);
  if (host === null) return null;
  const writtenPort = hostPort[2];
  const lowerScheme = scheme.toLowerCase();
  const { from, to } = rewrite;
  if (from.scheme !== null && from.scheme !== lowerScheme) return null;
  if (from.port !== null) {
    const port = writtenPort === undefined || writtenPort === "" ? defaultPorts[lowerScheme] : Number(writtenPort);
    if (port !== from.port) return null;
  }
  let prefix = "";
  if (from.wildcard) {
    if (!host.endsWith(`.${from.host}`)) return null;
    prefix = writtenHost.slice(0, writtenHost.length - from.host.length - 1);
  } else if (host !== from.host) {
    return null;
  }
  const newHost = to.wildcard ? `${prefix}.${to.host}` : to.host;
  const newPort = to.port !== null ? `:${to.port}` : from.port !== null || writtenPort === undefined ? "" : `:${writtenPort}`;
  return `${to.scheme ?? scheme}://${newHost}${newPort}${tail}`;
}
