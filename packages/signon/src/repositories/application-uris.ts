import { asc, eq } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications } from "../db/schema.js";

/** The URIs of an application that name where it runs. */
export interface ApplicationUris {
  redirectUris: string[];
  homeUri: string | null;
  pushBaseUrl: string | null;
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string | null;
}

/** An application's id, name and URIs. */
export interface ApplicationWithUris extends ApplicationUris {
  id: string;
  name: string;
}

const uriColumns = {
  id: applications.id,
  name: applications.name,
  redirectUris: applications.redirectUris,
  homeUri: applications.homeUri,
  pushBaseUrl: applications.pushBaseUrl,
  postLogoutRedirectUris: applications.postLogoutRedirectUris,
  backchannelLogoutUri: applications.backchannelLogoutUri,
};

/**
 * Every application (retired ones too) with its URIs, by name. With `lock`,
 * the rows are locked until the transaction ends, so that an edit made
 * meanwhile waits rather than being overwritten.
 */
export async function listApplicationUris(db: SignonDatabase, options: { lock: boolean }): Promise<ApplicationWithUris[]> {
  const query = db.select(uriColumns).from(applications).orderBy(asc(applications.name));
  return options.lock ? query.for("update") : query;
}

/** Sets an application's URIs. */
export async function setApplicationUris(db: SignonDatabase, id: string, uris: ApplicationUris): Promise<void> {
  await db.update(applications).set(uris).where(eq(applications.id, id));
}
