import { AccountError } from "../accounts/manage-users.js";
import { audit } from "../audit.js";
import type { SignonContext } from "../context.js";
import { redirectUriProblem } from "../oauth/redirect-uri.js";
import { listApplicationUris, setApplicationUris, type ApplicationUris, type ApplicationWithUris } from "../repositories/application-uris.js";
import { rewriteUri, type HostRewrite } from "./host-rewrite.js";

/** Which URI of an application changed, as output and the event log name it. */
export type UriField = "redirect_uri" | "home_uri" | "push_base_url" | "post_logout_redirect_uri" | "backchannel_logout_uri";

/** One URI before and after. */
export interface UriChange {
  field: UriField;
  old: string;
  new: string;
}

/** What a rewrite does to one application. */
export interface ApplicationRewrite {
  applicationId: string;
  name: string;
  changes: UriChange[];
  after: ApplicationUris;
}

/** The longest URI an application keeps (the web form's limit). */
const maxUriLength = 2000;

/** What `rewrite` does to an application's URIs, or `null` when none of them is on `--from`'s host. */
export function planApplicationRewrite(application: ApplicationWithUris, rewrite: HostRewrite): ApplicationRewrite | null {
  const changes: UriChange[] = [];
  const one = (field: UriField, uri: string): string => {
    const rewritten = rewriteUri(uri, rewrite);
    if (rewritten === null || rewritten === uri) return uri;
    changes.push({ field, old: uri, new: rewritten });
    return rewritten;
  };
  const optional = (field: UriField, uri: string | null) => (uri === null ? null : one(field, uri));
  const after: ApplicationUris = {
    // Two URIs that become the same are kept once: redirect URIs are matched exactly, so a repeat means nothing.
    redirectUris: [...new Set(application.redirectUris.map((uri) => one("redirect_uri", uri)))],
    homeUri: optional("home_uri", application.homeUri),
    pushBaseUrl: optional("push_base_url", application.pushBaseUrl),
    postLogoutRedirectUris: [...new Set(application.postLogoutRedirectUris.map((uri) => one("post_logout_redirect_uri", uri)))],
    backchannelLogoutUri: optional("backchannel_logout_uri", application.backchannelLogoutUri),
  };
  return changes.length === 0 ? null : { applicationId: application.id, name: application.name, changes, after };
}

const fieldWords: Record<UriField, string> = {
  redirect_uri: "redirect URI",
  home_uri: "home URI",
  push_base_url: "push base URL",
  post_logout_redirect_uri: "post-logout redirect URI",
  backchannel_logout_uri: "back-channel logout URI",
};

/** A URI field in words, for output and the event log. */
export function uriFieldWords(field: UriField): string {
  return fieldWords[field];
}

/** Each rewritten URI that an application could not register (the rules of S8), in words. */
function problemsOf(rewrites: readonly ApplicationRewrite[], allowLoopbackHttp: boolean): string[] {
  const problems: string[] = [];
  for (const { name, changes } of rewrites) {
    for (const change of changes) {
      const problem = change.new.length > maxUriLength ? `is longer than ${maxUriLength} characters` : redirectUriProblem(change.new, { allowLoopbackHttp });
      if (problem !== null) problems.push(`${name}: the ${fieldWords[change.field]} would become ${change.new}, which ${problem}`);
    }
  }
  return problems;
}

/**
 * Rewrites the scheme and host of every application's URIs that are on
 * `rewrite.from`'s host (redirect URIs, home URI, push base URL, post-logout
 * redirect URIs, back-channel logout URI; paths stay as written), for an
 * environment made from a copy of another's database. Retired applications
 * are rewritten too, so they are right if brought back. All of it in one
 * transaction, with one `application_uris_rewritten` audit event per
 * application changed; with `dryRun`, nothing is written. Returns what
 * changes (or would), by application name.
 *
 * Refused (AccountError, nothing written) when a rewritten URI could not be
 * registered: not `https`, except `http` on a loopback host in development.
 */
export async function rewriteApplicationUris(ctx: SignonContext, rewrite: HostRewrite, options: { dryRun: boolean }): Promise<ApplicationRewrite[]> {
  const allowLoopbackHttp = ctx.config.mode === "development";
  const plan = async (db: SignonContext["db"]) => {
    const rewrites = (await listApplicationUris(db, { lock: !options.dryRun }))
      .map((application) => planApplicationRewrite(application, rewrite))
      .filter((planned): planned is ApplicationRewrite => planned !== null);
    const problems = problemsOf(rewrites, allowLoopbackHttp);
    if (problems.length > 0) {
      const shown = problems.slice(0, 10);
      const more = problems.length > shown.length ? `\n(and ${problems.length - shown.length} more)` : "";
      throw new AccountError(`Nothing was rewritten: applications could not use the rewritten URIs.\n${shown.join("\n")}${more}`);
    }
    return rewrites;
  };
  if (options.dryRun) return plan(ctx.db);
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const rewrites = await plan(tx);
    for (const planned of rewrites) {
      await setApplicationUris(tx, planned.applicationId, planned.after);
      await audit(tx, {
        action: "application_uris_rewritten",
        at: now,
        applicationId: planned.applicationId,
        details: { from_host: rewrite.from.text, to_host: rewrite.to.text, changes: planned.changes },
      });
    }
    return rewrites;
  });
}
