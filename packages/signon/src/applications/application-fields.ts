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
  default_permissions?: string | undefined;
  permissions_not_grantable_in_ui?: string | undefined;
  api_only?: string | undefined;
  push_enabled?: string | undefined;
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
  /** Granted to every new person (creation with a password, or invitation accepted). */
  defaultPermissions: string[];
  /** Not offered in the web interface's permission grids; the CLI still grants them. */
  permissionsNotGrantableInUi: string[];
  /** Used by API users only: no dashboard, no grid, no sign-in through `/oauth/authorize`. */
  apiOnly: boolean;
  /** Off: no pushes are queued for it. */
  pushEnabled: boolean;
}

/** Messages for the fields of a form that are not right, by field name. */
export type FieldErrors = Partial<Record<string, string>>;

/** Longest name of an application, in characters. */
export const applicationNameMaxLength = 200;

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
  /** The permissions the application supports already: names brought from GOV.UK Signon ("GDS Editor") stay as they are. */
  kept: readonly string[] = [],
): { ok: true; settings: ApplicationSettings } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const allowLoopbackHttp = config.mode === "development";
  const name = (input.name ?? "").trim();
  if (input.name !== undefined && (name === "" || name.length > applicationNameMaxLength)) errors.name = `Enter a name of 1 to ${applicationNameMaxLength} characters`;

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
  const badPermission = supportedPermissions.find((permission) => !permissionPattern.test(permission) && !kept.includes(permission));
  if (badPermission !== undefined) {
    errors.permissions = `Permission names are lower-case letters, digits and underscores, starting with a letter: ${badPermission} is not`;
  } else if (supportedPermissions.length > maxPermissions) {
    errors.permissions = `An application supports at most ${maxPermissions} permissions`;
  }

  const delegatablePermissions = splitList(input.delegatable_permissions).sort();
  const notSupported = delegatablePermissions.filter((permission) => !supportedPermissions.includes(permission));
  if (notSupported.length > 0) errors.delegatable_permissions = `Delegatable permissions must be supported ones: ${notSupported.join(", ")} is not`;

  const subset = (field: "default_permissions" | "permissions_not_grantable_in_ui", label: string): string[] => {
    const chosen = splitList(input[field] ?? "").sort();
    const unknown = chosen.filter((permission) => !supportedPermissions.includes(permission));
    if (unknown.length > 0) errors[field] = `${label} must be supported ones: ${unknown.join(", ")} is not`;
    return chosen;
  };
  const defaultPermissions = subset("default_permissions", "Default permissions");
  const permissionsNotGrantableInUi = subset("permissions_not_grantable_in_ui", "Permissions kept out of the web interface");

  for (const field of ["require_pkce", "api_only"] as const) {
    // A box left empty is either not sent (a browser) or sent empty (the CLI, a form shown again).
    if (input[field] !== undefined && input[field] !== "" && input[field] !== "yes") errors[field] = "Tick the box or leave it empty";
  }
  if (input.push_enabled !== undefined && input.push_enabled !== "yes" && input.push_enabled !== "no") errors.push_enabled = "Choose on or off";

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: {
      name,
      redirectUris,
      homeUri,
      pushBaseUrl,
      supportedPermissions,
      delegatablePermissions,
      requirePkce: input.require_pkce === "yes",
      defaultPermissions,
      permissionsNotGrantableInUi,
      apiOnly: input.api_only === "yes",
      pushEnabled: input.push_enabled !== "no",
    },
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
  defaultPermissions: readonly string[];
  permissionsNotGrantableInUi: readonly string[];
  apiOnly: boolean;
  pushEnabled: boolean;
}): Required<ApplicationFormInput> {
  return {
    name: application.name,
    redirect_uris: application.redirectUris.join("\n"),
    home_uri: application.homeUri ?? "",
    push_base_url: application.pushBaseUrl ?? "",
    permissions: application.supportedPermissions.filter((permission) => permission !== "signin").join(", "),
    delegatable_permissions: application.delegatablePermissions.join(", "),
    require_pkce: application.requirePkce ? "yes" : "",
    default_permissions: application.defaultPermissions.join(", "),
    permissions_not_grantable_in_ui: application.permissionsNotGrantableInUi.join(", "),
    api_only: application.apiOnly ? "yes" : "",
    push_enabled: application.pushEnabled ? "yes" : "no",
  };
}
