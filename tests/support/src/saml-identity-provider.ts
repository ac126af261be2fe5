// A SAML 2.0 identity provider over real HTTP whose answers a test scripts: it takes Sign-on's AuthnRequest
// (HTTP-Redirect binding) and answers with a Response for the person it vouches for, its assertion signed with
// xml-crypto (the library node-saml checks signatures with), or spoiled: unsigned, signed by another key, wrapped
// (an unsigned assertion put before the signed one), expired, for another audience, or a failure status.
import { execFileSync } from "node:child_process";
import { createSign, createVerify, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { SignedXml } from "xml-crypto";

export interface SamlPerson {
  nameId: string;
  email?: string;
  name?: string;
  authnContext?: string;
  sessionIndex?: string;
}

export interface SamlScript {
  signing?: "assertion" | "none" | "other_key" | "wrapped";
  audience?: string;
  /** Seconds from now the assertion stops being valid (negative: expired). */
  validForSeconds?: number;
  /** A status other than Success (e.g. `urn:oasis:names:tc:SAML:2.0:status:Responder`). */
  status?: string;
  /** Answers to a request id other than the one received. */
  inResponseTo?: string;
  /** The assertion's Issuer, if not the IdP's entity id. */
  assertionIssuer?: string;
  /** The NameID's format, if not persistent. */
  nameIdFormat?: string;
  /** The bearer confirmation leaves out InResponseTo (the Response keeps it). */
  unboundConfirmation?: boolean;
}

export interface ScriptedSamlProvider {
  entityId: string;
  signOnUrl: string;
  certificate: string;
  metadata: string;
  /** The same, saying it wants signed requests (`WantAuthnRequestsSigned`). */
  signedRequestsMetadata: string;
  person: SamlPerson;
  script: SamlScript;
  /** The last AuthnRequest received (its XML). */
  lastRequest: string | null;
  /** Sign-on's certificate, when the IdP wants signed requests: an AuthnRequest whose query signature it does not verify is refused (403). */
  requestSigner: string | null;
  /** Whether the last AuthnRequest's query signature verified with `requestSigner`. */
  lastRequestSigned: boolean;
  /**
   * A LogoutRequest for `nameId` (and `sessionIndex`) to Sign-on's single logout URL, by HTTP-Redirect: its query
   * signed with the IdP's key, with another key, or not at all.
   */
  logoutUrl(sloUrl: string, nameId: string, options?: { sessionIndex?: string; signing?: "good" | "other_key" | "none"; id?: string; issuedSecondsAgo?: number; padding?: number }): string;
  close(): Promise<void>;
}

function keyPair(): { key: string; certificate: string } {
  const folder = mkdtempSync(join(tmpdir(), "saml-idp-"));
  try {
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(folder, "key.pem"), "-out", join(folder, "cert.pem"), "-days", "2", "-subj", "/CN=scripted-saml-idp"], { stdio: "ignore" });
    return { key: readFileSync(join(folder, "key.pem"), "utf8"), certificate: readFileSync(join(folder, "cert.pem"), "utf8") };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const bare = (pem: string) => pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");

function sign(xml: string, pair: { key: string; certificate: string }, id: string): string {
  const signature = new SignedXml({
    privateKey: pair.key,
    publicCert: pair.certificate,
    signatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
  });
  signature.addReference({
    xpath: `//*[local-name(.)='Assertion' and @ID='${id}']`,
    digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256",
    transforms: ["http://www.w3.org/2000/09/xmldsig#enveloped-signature", "http://www.w3.org/2001/10/xml-exc-c14n#"],
  });
  signature.computeSignature(xml, { location: { reference: `//*[local-name(.)='Assertion' and @ID='${id}']/*[local-name(.)='Issuer']`, action: "after" } });
  return signature.getSignedXml();
}

/** Starts the IdP on a free loopback port; `acsUrl` and `spEntityId` are Sign-on's. */
export async function startSamlIdentityProvider(spEntityId: string): Promise<ScriptedSamlProvider> {
  const pair = keyPair();
  const other = keyPair();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${base}/metadata`;
  const metadataOf = (wantsSignedRequests: boolean) => `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"${wantsSignedRequests ? ' WantAuthnRequestsSigned="true"' : ""}>
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${bare(pair.certificate)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${base}/slo"/>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${base}/sso-post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${base}/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
  const provider: ScriptedSamlProvider = {
    entityId,
    signOnUrl: `${base}/sso`,
    certificate: pair.certificate,
    metadata: metadataOf(false),
    signedRequestsMetadata: metadataOf(true),
    person: { nameId: "person-1" },
    script: {},
    lastRequest: null,
    requestSigner: null,
    lastRequestSigned: false,
    logoutUrl(sloUrl, nameId, options = {}) {
      const issued = new Date(Date.now() - (options.issuedSecondsAgo ?? 0) * 1000).toISOString();
      const padding = options.padding === undefined ? "" : `<!--${" ".repeat(options.padding)}-->`;
      const xml = `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${options.id ?? `_l${randomBytes(10).toString("hex")}`}" Version="2.0" IssueInstant="${issued}" Destination="${sloUrl}">${padding}<saml:Issuer>${entityId}</saml:Issuer><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${escape(nameId)}</saml:NameID>${options.sessionIndex === undefined ? "" : `<samlp:SessionIndex>${escape(options.sessionIndex)}</samlp:SessionIndex>`}</samlp:LogoutRequest>`;
      const query = `SAMLRequest=${encodeURIComponent(deflateRawSync(xml).toString("base64"))}&RelayState=${encodeURIComponent("idp-relay")}&SigAlg=${encodeURIComponent("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256")}`;
      const signing = options.signing ?? "good";
      if (signing === "none") return `${sloUrl}?${query}`;
      const signature = createSign("RSA-SHA256").update(query).sign(signing === "other_key" ? other.key : pair.key, "base64");
      return `${sloUrl}?${query}&Signature=${encodeURIComponent(signature)}`;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  function assertion(id: string, requestId: string, acs: string, person: SamlPerson): string {
    const now = new Date();
    const until = new Date(now.getTime() + (provider.script.validForSeconds ?? 300) * 1000).toISOString();
    const attributes = [
      person.email === undefined ? "" : `<saml:Attribute Name="email"><saml:AttributeValue>${escape(person.email)}</saml:AttributeValue></saml:Attribute>`,
      person.name === undefined ? "" : `<saml:Attribute Name="displayName"><saml:AttributeValue>${escape(person.name)}</saml:AttributeValue></saml:Attribute>`,
    ].join("");
    const script = provider.script;
    const confirmationAnswers = script.unboundConfirmation === true ? "" : ` InResponseTo="${requestId}"`;
    return `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="${now.toISOString()}"><saml:Issuer>${escape(script.assertionIssuer ?? entityId)}</saml:Issuer><saml:Subject><saml:NameID Format="${script.nameIdFormat ?? "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"}">${escape(person.nameId)}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData${confirmationAnswers} NotOnOrAfter="${until}" Recipient="${acs}"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="${new Date(now.getTime() - 60_000).toISOString()}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${escape(provider.script.audience ?? spEntityId)}</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${escape(person.sessionIndex ?? "_session-1")}"><saml:AuthnContext><saml:AuthnContextClassRef>${escape(person.authnContext ?? "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport")}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>${attributes === "" ? "" : `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`}</saml:Assertion>`;
  }

  function response(requestId: string, acs: string): string {
    const responseId = `_r${randomBytes(10).toString("hex")}`;
    const assertionId = `_a${randomBytes(10).toString("hex")}`;
    const answering = provider.script.inResponseTo ?? requestId;
    const status = provider.script.status ?? "urn:oasis:names:tc:SAML:2.0:status:Success";
    const open = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${responseId}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${acs}" InResponseTo="${answering}"><saml:Issuer>${entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${status}"/></samlp:Status>`;
    if (status !== "urn:oasis:names:tc:SAML:2.0:status:Success") return `${open}</samlp:Response>`;
    const signing = provider.script.signing ?? "assertion";
    const xml = `${open}${assertion(assertionId, answering, acs, provider.person)}</samlp:Response>`;
    if (signing === "none") return xml;
    if (signing === "other_key") return sign(xml, other, assertionId);
    const signed = sign(xml, pair, assertionId);
    if (signing === "assertion") return signed;
    // Signature wrapping: the signed assertion (of the person scripted) stays, and an unsigned one for someone else
    // goes first, where a careless reader would take it.
    const evil = assertion(`_e${randomBytes(10).toString("hex")}`, answering, acs, { nameId: "someone-else", email: "victim@dept.example.gov.uk", name: "Victim" });
    return signed.replace(/<samlp:Status>.*?<\/samlp:Status>/, (statusXml) => `${statusXml}${evil}`);
  }

  server.on("request", (request, reply) => {
    const url = new URL(request.url ?? "/", base);
    if (url.pathname === "/sso") {
      const xml = inflateRawSync(Buffer.from(url.searchParams.get("SAMLRequest") ?? "", "base64")).toString("utf8");
      provider.lastRequest = xml;
      // HTTP-Redirect binding: the signature covers SAMLRequest, RelayState and SigAlg as they were sent.
      const raw = (request.url ?? "").slice((request.url ?? "").indexOf("?") + 1).split("&");
      const piece = (name: string) => raw.find((part) => part.startsWith(`${name}=`));
      const signed = ["SAMLRequest", "RelayState", "SigAlg"].map(piece).filter((part) => part !== undefined).join("&");
      const signature = url.searchParams.get("Signature");
      provider.lastRequestSigned =
        provider.requestSigner !== null && signature !== null && createVerify("RSA-SHA256").update(signed).verify(provider.requestSigner, signature, "base64");
      if (provider.requestSigner !== null && !provider.lastRequestSigned) {
        reply.writeHead(403).end("the request is not signed by the service provider");
        return;
      }
      const requestId = /\sID="([^"]+)"/.exec(xml)?.[1] ?? "";
      const acs = /AssertionConsumerServiceURL="([^"]+)"/.exec(xml)?.[1] ?? "";
      const samlResponse = Buffer.from(response(requestId, acs)).toString("base64");
      const relayState = url.searchParams.get("RelayState") ?? "";
      // The HTTP-POST binding: a page that posts the answer to Sign-on (a browser submits it; a test reads its fields).
      reply.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      reply.end(
        `<!doctype html><html lang="en"><head><title>Signing you in</title></head><body onload="document.forms[0].submit()"><form method="post" action="${escape(acs)}"><input type="hidden" name="SAMLResponse" value="${samlResponse}"><input type="hidden" name="RelayState" value="${escape(relayState)}"><button type="submit">Continue</button></form></body></html>`,
      );
      return;
    }
    if (url.pathname === "/slo") {
      // Where Sign-on's LogoutResponse comes back: a page saying the sign-out is done.
      reply.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      reply.end('<!doctype html><html lang="en"><head><title>Signed out</title></head><body><h1>Signed out</h1></body></html>');
      return;
    }
    reply.writeHead(404).end();
  });
  return provider;
}

/** The fields of the IdP's HTTP-POST page. */
export function postedFields(html: string): { action: string; SAMLResponse: string; RelayState: string } {
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
  return { action: /action="([^"]+)"/.exec(html)?.[1] ?? "", SAMLResponse: field("SAMLResponse"), RelayState: field("RelayState") };
}
