import { X509Certificate } from "node:crypto";
import { DOMParser } from "@xmldom/xmldom";
import type { SignonConfig } from "../config.js";
import { ProviderSettingError } from "./settings.js";

const metadataNamespace = "urn:oasis:names:tc:SAML:2.0:metadata";
const signatureNamespace = "http://www.w3.org/2000/09/xmldsig#";
const redirectBinding = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";

/** What an administrator gives for a SAML 2.0 identity provider: its metadata, or its settings one by one. */
export interface SamlProviderInput {
  /** The IdP's metadata document (XML), as downloaded from it. */
  metadata?: string | undefined;
  entityId?: string | undefined;
  signOnUrl?: string | undefined;
  logoutUrl?: string | undefined;
  /** The certificates it signs with (PEM, one or more). */
  certificates?: string | undefined;
  /** Its metadata's `WantAuthnRequestsSigned`. */
  wantsSignedRequests?: boolean | undefined;
}

export interface CheckedSamlProvider {
  entityId: string;
  signOnUrl: string;
  logoutUrl: string | null;
  certificates: string[];
}

function checkUrl(text: string, what: string, mode: SignonConfig["mode"]): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ProviderSettingError(`${what} must be a URL.`, "saml_sign_on_url");
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback && mode === "development")) throw new ProviderSettingError(`${what} must be an https URL.`, "saml_sign_on_url");
  return url.href;
}

/** PEM certificates from text holding one or more (or bare base64, as metadata writes them), each checked. */
export function certificatesFrom(text: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const candidates = blocks.length > 0 ? blocks : text.trim() === "" ? [] : [`-----BEGIN CERTIFICATE-----\n${text.replace(/\s+/g, "")}\n-----END CERTIFICATE-----`];
  return candidates.map((pem) => {
    try {
      return new X509Certificate(pem).toString();
    } catch {
      throw new ProviderSettingError("The signing certificate must be an X.509 certificate in PEM.", "saml_certificates");
    }
  });
}

/** The settings an IdP's metadata gives: its entity id, its HTTP-Redirect single sign-on and logout services, its signing certificates. */
function fromMetadata(xml: string): SamlProviderInput {
  if (xml.length > 1_000_000) throw new ProviderSettingError("The metadata is at most 1 MB.", "saml_metadata");
  let parseError = false;
  const document = new DOMParser({ errorHandler: { error: () => (parseError = true), fatalError: () => (parseError = true) } }).parseFromString(xml, "text/xml");
  const descriptor = document.getElementsByTagNameNS(metadataNamespace, "EntityDescriptor")[0];
  const idp = descriptor?.getElementsByTagNameNS(metadataNamespace, "IDPSSODescriptor")[0];
  if (parseError || !descriptor || !idp) throw new ProviderSettingError("The metadata is not a SAML 2.0 identity provider's (no EntityDescriptor with an IDPSSODescriptor).", "saml_metadata");
  const service = (name: string) =>
    Array.from(idp.getElementsByTagNameNS(metadataNamespace, name)).find((element) => element.getAttribute("Binding") === redirectBinding)?.getAttribute("Location") ?? undefined;
  const certificates = Array.from(idp.getElementsByTagNameNS(metadataNamespace, "KeyDescriptor"))
    .filter((key) => (key.getAttribute("use") ?? "signing") === "signing")
    .flatMap((key) => Array.from(key.getElementsByTagNameNS(signatureNamespace, "X509Certificate")).map((element) => element.textContent ?? ""))
    .map((base64) => `-----BEGIN CERTIFICATE-----\n${base64.replace(/\s+/g, "")}\n-----END CERTIFICATE-----`)
    .join("\n");
  return {
    entityId: descriptor.getAttribute("entityID") ?? undefined,
    signOnUrl: service("SingleSignOnService"),
    logoutUrl: service("SingleLogoutService"),
    certificates,
    wantsSignedRequests: idp.getAttribute("WantAuthnRequestsSigned") === "true",
  };
}

/**
 * A SAML 2.0 identity provider's settings, from its metadata or given one by one: its entity id, where its single
 * sign-on service takes requests by HTTP-Redirect, where its single logout service is (if it has one), and at least
 * one certificate it signs with.
 */
export function checkSamlProvider(input: SamlProviderInput, mode: SignonConfig["mode"], canSignRequests: boolean): CheckedSamlProvider {
  const given = input.metadata !== undefined && input.metadata.trim() !== "" ? { ...fromMetadata(input.metadata), ...definedOnly(input) } : input;
  if (given.wantsSignedRequests === true && !canSignRequests) {
    throw new ProviderSettingError(
      "This identity provider wants signed requests: give Sign-on a signing key and certificate (SIGNON_SAML_SIGNING_KEY and SIGNON_SAML_SIGNING_CERT) first.",
      "saml_metadata",
    );
  }
  const entityId = given.entityId?.trim() ?? "";
  if (entityId === "" || entityId.length > 500 || !/^[\x21-\x7e]+$/.test(entityId)) throw new ProviderSettingError("Give the identity provider's entity id (at most 500 printable characters).", "saml_entity_id");
  if (given.signOnUrl === undefined || given.signOnUrl.trim() === "") throw new ProviderSettingError("Give the identity provider's single sign-on URL (HTTP-Redirect binding).", "saml_sign_on_url");
  const signOnUrl = checkUrl(given.signOnUrl, "The single sign-on URL", mode);
  const logoutUrl = given.logoutUrl === undefined || given.logoutUrl.trim() === "" ? null : checkUrl(given.logoutUrl, "The single logout URL", mode);
  const certificates = certificatesFrom(given.certificates ?? "");
  if (certificates.length === 0) throw new ProviderSettingError("Give at least one certificate the identity provider signs with.", "saml_certificates");
  if (certificates.length > 5) throw new ProviderSettingError("At most 5 signing certificates.", "saml_certificates");
  return { entityId, signOnUrl, logoutUrl, certificates };
}

function definedOnly(input: SamlProviderInput): SamlProviderInput {
  return Object.fromEntries(Object.entries(input).filter(([name, value]) => name !== "metadata" && typeof value === "string" && value.trim() !== "")) as SamlProviderInput;
}
