import { createHash } from "node:crypto";

/** A DNS-1123 label: what Kubernetes accepts as a namespace, and here as a secret's name. */
export const dns1123Label = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * `text` as a part of a DNS-1123 label: lower case, each run of other
 * characters a hyphen, at most `max` characters, no hyphen at either end.
 * Text without a letter or digit becomes `x` and a short digest of it, so
 * that two such names still differ.
 */
export function nameSlug(text: string, max: number): string {
  const slug = text
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, max)
    .replace(/-+$/, "");
  return slug !== "" ? slug : `x${createHash("sha256").update(text).digest("hex").slice(0, Math.max(1, Math.min(8, max - 1)))}`;
}

/** The secret name of an application's credentials: `signon-app-<application>`. */
export function applicationSecretName(applicationName: string): string {
  return `signon-app-${nameSlug(applicationName, 63 - "signon-app-".length)}`;
}

/** The secret name of an API user's token for an application: `signon-token-<API user>-<application>`. */
export function apiTokenSecretName(apiUserName: string, applicationName: string): string {
  const room = 63 - "signon-token-".length - 1;
  const application = nameSlug(applicationName, Math.floor(room / 2));
  return `signon-token-${nameSlug(apiUserName, room - application.length)}-${application}`;
}

/** One Kubernetes `Secret` to write. */
export interface SecretManifest {
  name: string;
  namespace: string | null;
  /** `metadata.annotations`: what the secret is for (never a secret). */
  annotations: Record<string, string>;
  /** Keys and their values, written base64-encoded under `data`. */
  data: Record<string, string>;
}

/** A YAML scalar that means exactly `value`: a JSON string is a YAML double-quoted scalar. */
function scalar(value: string): string {
  return JSON.stringify(value);
}

/**
 * A `v1` `Secret` of type `Opaque` as a YAML document, ready for
 * `kubectl apply -f`. Every value is quoted, so no name or annotation is
 * read as anything but a string; `data` values are base64.
 *
 * @see https://kubernetes.io/docs/concepts/configuration/secret/
 */
export function renderSecretManifest(secret: SecretManifest): string {
  const lines = [
    "apiVersion: v1",
    "kind: Secret",
    "metadata:",
    `  name: ${scalar(secret.name)}`,
    ...(secret.namespace === null ? [] : [`  namespace: ${scalar(secret.namespace)}`]),
    "  labels:",
    `    app.kubernetes.io/managed-by: ${scalar("signon")}`,
    "  annotations:",
    ...Object.entries(secret.annotations).map(([key, value]) => `    ${key}: ${scalar(value)}`),
    "type: Opaque",
    "data:",
    ...Object.entries(secret.data).map(([key, value]) => `  ${key}: ${scalar(Buffer.from(value, "utf8").toString("base64"))}`),
  ];
  return `${lines.join("\n")}\n`;
}
