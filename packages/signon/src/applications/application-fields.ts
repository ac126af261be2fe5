import type { SignonConfig } from "../config.js";
import { redirectUriProblem } from "../oauth/redirect-uri.js";
import { permissionPattern } from "./register-application.js";

/** The application form as posted: every value a string, as typed. */
export interface ApplicationFormInput {
  name?: string | undefined;
  redirect_uris: string;
  home_uri: string;
  push_base_url: string;
  permissions: string;
  delegatable_permissions: string;
  require_pkce?: string | undefined;
}

/** The settings an application form describes, checked. */
export interface ApplicationSettings {
  name: string;
  redirectUris: string[];
  homeUri: string | null;
  pushBaseUrl: string | null;
  /** Supported permissions, `signin` always among them, sorted. */
  supportedPermissions: string[];
  delegatablePermissions: string[];
  requirePkce: boolean;
}

/** Messages for the fields of a form that are not right, by field name. */
export type FieldErrors = Partial<Record<string, string>>;

const maxRedirectUris = 20;
const maxPermissions = 50;

/** Splits a textarea or text field on commas and line breaks, dropping blanks and repeats. */
export function splitList(value: string): string[] {
  return [...new Set(value.split(/[,\r\n]+/).map((item) => item.trim()).filter((item) => item !== ""))];
}

/**
 * Checks an application form (create or edit) with the rules of
 * `registerApplication`: redirect, home and push URIs absolute and https
 * (loopback http in development), permission names in lower-case, the
 * delegatable ones among the supported ones. Returns the settings, or a
 * message per field that is not right.
 */
export function checkApplicationForm(
  input: ApplicationFormInput,
  config: Pick<SignonConfig, "mode">,
): { ok: true; settings: ApplicationSettings } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const allowLoopbackHttp = config.mode === "development";
  const name = (input.name ?? "").trim();
  if (input.name !== undefined && (name === "" || name.length > 200)) errors.name = "Enter a name of 1 to 200 characters";

  const redirectUris = input.redirect_uris.split(/[\r\n]+/).map((uri) => uri.trim()).filter((uri) => uri !== "");
  if (redirectUris.length === 0) errors.redirect_uris = "Enter at least one redirect URI";
  else if (redirectUris.length > maxRedirectUris) errors.redirect_uris = `Enter at most ${maxRedirectUris} redirect URIs`;
  else {
    for (const uri of redirectUris) {
      const problem = redirectUriProblem(uri, { allowLoopbackHttp });
      if (problem) {
        errors.redirect_uris = `Redirect URI ${uri} ${problem}`;
        break;
      }
    }
  }

  const optionalUri = (field: "home_uri" | "push_base_url", label: string): string | null => {
    const uri = input[field].trim();
    if (uri === "") return null;
    const problem = redirectUriProblem(uri, { allowLoopbackHttp });
    if (problem) errors[field] = `${label} ${problem}`;
    return uri;
  };
  const homeUri = optionalUri("home_uri", "The home URI");
  const pushBaseUrl = optionalUri("push_base_url", "The push base URL");

  const supportedPermissions = [...new Set(["signin", ...splitList(input.permissions)])].sort();
  const badPermission = supportedPermissions.find((permission) => !permissionPattern.test(permission));
  if (badPermission !== undefined) {
    errors.permissions = `Permission names are lower-case letters, digits and underscores, starting with a letter: ${badPermission} is not`;
  } else if (supportedPermissions.length > maxPermissions) {
    errors.permissions = `An application supports at most ${maxPermissions} permissions`;
  }

  const delegatablePermissions = splitList(input.delegatable_permissions).sort();
  const notSupported = delegatablePermissions.filter((permission) => !supportedPermissions.includes(permission));
  if (notSupported.length > 0) errors.delegatable_permissions = `Delegatable permissions must be supported ones: ${notSupported.join(", ")} is not`;

  if (input.require_pkce !== undefined && input.require_pkce !== "yes") errors.require_pkce = "Tick the box or leave it empty";

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: { name, redirectUris, homeUri, pushBaseUrl, supportedPermissions, delegatablePermissions, requirePkce: input.require_pkce === "yes" },
  };
}

/** The form values that show an application's current settings. */
export function applicationFormValues(application: {
  name: string;
  redirectUris: readonly string[];
  homeUri: string | null;
  pushBaseUrl: string | null;
  supportedPermissions: readonly string[];
  delegatablePermissions: readonly string[];
  requirePkce: boolean;
}): Required<ApplicationFormInput> {
  return {
    name: application.name,
    redirect_uris: application.redirectUris.join("\n"),
    home_uri: application.homeUri ?? "",
    push_base_url: application.pushBaseUrl ?? "",
    permissions: application.supportedPermissions.filter((permission) => permission !== "signin").join(", "),
    delegatable_permissions: application.delegatablePermissions.join(", "),
    require_pkce: application.requirePkce ? "yes" : "",
  };
}
