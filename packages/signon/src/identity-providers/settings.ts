import { X509Certificate, createHash, createPrivateKey } from "node:crypto";
import { consumerMailDomains } from "../accounts/consumer-mail-domains.js";
import type { SignonConfig } from "../config.js";

/** A setting of an identity provider that cannot be kept as given, with the words to show. */
export class ProviderSettingError extends Error {
  /** The form field the setting comes from. */
  constructor(
    message: string,
    readonly field: ProviderField,
  ) {
    super(message);
  }
}

export type ProviderField =
  | "issuer"
  | "client_id"
  | "client_authentication"
  | "client_secret"
  | "private_key"
  | "certificate"
  | "key_id"
  | "scopes"
  | "domains"
  | "password_addresses"
  | "second_factor_contexts"
  | "suspend_unseen_days"
  | "saml_metadata"
  | "saml_entity_id"
  | "saml_sign_on_url"
  | "saml_certificates";

export const clientAuthentications = ["client_secret_basic", "client_secret_post", "private_key_jwt"] as const;
export type ClientAuthentication = (typeof clientAuthentications)[number];

/** What an administrator gives for an OpenID Connect provider, as typed (the web form's fields, the command's options). */
export interface OpenIdProviderInput {
  issuer: string;
  clientId: string;
  clientAuthentication?: string | undefined;
  /** The client secret (`client_secret_*`); left out on a change, the stored one is kept. */
  clientSecret?: string | undefined;
  /** `private_key_jwt`: the private key (PKCS #8 PEM) and, when the provider identifies keys by certificate, the certificate (PEM). */
  privateKey?: string | undefined;
  certificate?: string | undefined;
  keyId?: string | undefined;
  scopes?: string | undefined;
}

/** What the organisation decides, whatever the protocol. */
export interface ProviderPolicyInput {
  domains: string;
  passwordAddresses?: string | undefined;
  createAccounts?: boolean | undefined;
  secondFactorContexts?: string | undefined;
  suspendUnseenDays?: string | undefined;
}

/** The checked settings, ready to store (secrets not yet sealed). */
export interface CheckedOpenIdProvider {
  issuer: string;
  clientId: string;
  clientAuthentication: ClientAuthentication;
  /** The secret or the private key's PEM; `null`: keep the stored one. */
  clientCredential: string | null;
  clientKeyId: string | null;
  /** The certificate's PEM; `null`: none given (on a change, keep the stored one). */
  clientCertificate: string | null;
  scopes: string;
}

export interface CheckedPolicy {
  domains: string[];
  passwordAddresses: string[];
  createAccounts: boolean;
  secondFactorContexts: string[];
  suspendUnseenDays: number | null;
}

const domainPattern = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const listSeparator = /[\s,]+/;

function listOf(text: string | undefined): string[] {
  return [...new Set((text ?? "").split(listSeparator).map((item) => item.trim()).filter((item) => item !== ""))];
}

function refuseControlCharacters(name: string, value: string, field: ProviderField): void {
  if ([...value].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f)) {
    throw new ProviderSettingError(`${name} cannot hold control characters.`, field);
  }
}

/**
 * The e-mail domains a provider answers for: lower case, at least one, each a host name with a dot, none a
 * consumer mail service (an address at gmail.com belongs to nobody's organisation).
 */
export function checkDomains(text: string): string[] {
  const domains = listOf(text.toLowerCase());
  if (domains.length === 0) throw new ProviderSettingError("Give at least one e-mail domain, for example dept.example.gov.uk.", "domains");
  if (domains.length > 50) throw new ProviderSettingError("A provider answers for at most 50 domains.", "domains");
  for (const domain of domains) {
    if (!domainPattern.test(domain)) throw new ProviderSettingError(`“${domain.slice(0, 80)}” is not an e-mail domain (for example dept.example.gov.uk).`, "domains");
    if (consumerMailDomains.includes(domain)) throw new ProviderSettingError(`${domain} is a public mail service: its addresses belong to nobody's organisation.`, "domains");
  }
  return domains;
}

/** An issuer URL: https (http on a loopback host in development), no query or fragment, as OpenID Connect Discovery requires. */
export function checkIssuer(text: string, mode: SignonConfig["mode"]): string {
  refuseControlCharacters("The issuer", text, "issuer");
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ProviderSettingError("The issuer must be a URL, for example https://login.microsoftonline.com/<tenant>/v2.0.", "issuer");
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback && mode === "development")) {
    throw new ProviderSettingError("The issuer must be an https URL.", "issuer");
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new ProviderSettingError("The issuer cannot have a query, a fragment or a user name.", "issuer");
  }
  if (text.trim().length > 500) throw new ProviderSettingError("The issuer is at most 500 characters.", "issuer");
  // Kept exactly as given (bar spaces around it): the ID tokens' `iss` must equal it.
  return text.trim();
}

export function checkOpenIdProvider(input: OpenIdProviderInput, mode: SignonConfig["mode"], changing: boolean): CheckedOpenIdProvider {
  const issuer = checkIssuer(input.issuer, mode);
  const clientId = input.clientId.trim();
  if (clientId === "" || clientId.length > 255) throw new ProviderSettingError("Give the client id the provider gave Sign-on (at most 255 characters).", "client_id");
  refuseControlCharacters("The client id", clientId, "client_id");
  const clientAuthentication = (input.clientAuthentication?.trim() || "client_secret_basic") as ClientAuthentication;
  if (!clientAuthentications.includes(clientAuthentication)) {
    throw new ProviderSettingError(`The client authentication is one of ${clientAuthentications.join(", ")}.`, "client_authentication");
  }
  const scopes = listOf(input.scopes ?? "openid email profile");
  if (!scopes.includes("openid")) scopes.unshift("openid");
  if (scopes.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(scope)) || scopes.length > 20) {
    throw new ProviderSettingError("Scopes are words of printable characters, separated by spaces (for example openid email profile).", "scopes");
  }
  let clientCredential: string | null = null;
  let clientKeyId: string | null = null;
  let clientCertificate: string | null = null;
  if (clientAuthentication === "private_key_jwt") {
    if (input.privateKey !== undefined && input.privateKey.trim() !== "") {
      clientCredential = checkPrivateKey(input.privateKey);
    } else if (!changing) {
      throw new ProviderSettingError("private_key_jwt needs Sign-on's private key (PKCS #8 PEM).", "private_key");
    }
    if (input.certificate !== undefined && input.certificate.trim() !== "") clientCertificate = checkCertificate(input.certificate);
    clientKeyId = input.keyId?.trim() || null;
    if (clientKeyId !== null && (clientKeyId.length > 200 || !/^[\x21-\x7e]+$/.test(clientKeyId))) throw new ProviderSettingError("The key id is at most 200 printable characters.", "key_id");
  } else if (input.clientSecret !== undefined && input.clientSecret !== "") {
    if (input.clientSecret.length > 1000) throw new ProviderSettingError("The client secret is at most 1,000 characters.", "client_secret");
    refuseControlCharacters("The client secret", input.clientSecret, "client_secret");
    clientCredential = input.clientSecret;
  } else if (!changing) {
    throw new ProviderSettingError("Give the client secret the provider gave Sign-on.", "client_secret");
  }
  return { issuer, clientId, clientAuthentication, clientCredential, clientKeyId, clientCertificate, scopes: scopes.join(" ") };
}

function checkPrivateKey(pem: string): string {
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "rsa" && key.asymmetricKeyType !== "ec") throw new Error("type");
    return key.export({ type: "pkcs8", format: "pem" }).toString();
  } catch {
    throw new ProviderSettingError("The private key must be an RSA or EC private key in PEM.", "private_key");
  }
}

function checkCertificate(pem: string): string {
  try {
    return new X509Certificate(pem).toString();
  } catch {
    throw new ProviderSettingError("The certificate must be an X.509 certificate in PEM.", "certificate");
  }
}

/**
 * A certificate's thumbprints as a client assertion's header carries them: `x5t` (SHA-1, which Microsoft Entra ID
 * matches a certificate credential by) and `x5t#S256` (SHA-256), base64url.
 */
export function certificateThumbprints(pem: string): { "x5t": string; "x5t#S256": string } {
  const der = new X509Certificate(pem).raw;
  return { x5t: createHash("sha1").update(der).digest("base64url"), "x5t#S256": createHash("sha256").update(der).digest("base64url") };
}

export function checkPolicy(input: ProviderPolicyInput): CheckedPolicy {
  const domains = checkDomains(input.domains);
  const passwordAddresses = listOf(input.passwordAddresses?.toLowerCase());
  for (const address of passwordAddresses) {
    const at = address.lastIndexOf("@");
    if (at < 1 || address.length > 254) throw new ProviderSettingError(`“${address.slice(0, 80)}” is not an e-mail address.`, "password_addresses");
    if (!domains.includes(address.slice(at + 1))) throw new ProviderSettingError(`${address} is not at one of the provider's domains: it signs in with a password anyway.`, "password_addresses");
  }
  const secondFactorContexts = listOf(input.secondFactorContexts);
  if (secondFactorContexts.some((context) => context.length > 300 || !/^[\x21-\x7e]+$/.test(context)) || secondFactorContexts.length > 20) {
    throw new ProviderSettingError("Second-factor contexts are at most 20 values of printable characters, separated by spaces.", "second_factor_contexts");
  }
  const days = input.suspendUnseenDays?.trim() ?? "";
  let suspendUnseenDays: number | null = null;
  if (days !== "") {
    if (!/^\d{1,4}$/.test(days) || Number(days) < 1 || Number(days) > 3650) throw new ProviderSettingError("Days unseen before suspension is a whole number from 1 to 3650, or empty.", "suspend_unseen_days");
    suspendUnseenDays = Number(days);
  }
  return { domains, passwordAddresses, createAccounts: input.createAccounts ?? false, secondFactorContexts, suspendUnseenDays };
}
