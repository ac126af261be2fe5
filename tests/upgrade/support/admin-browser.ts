// An administrator in Chromium through nginx, signed in once, ticking and clearing a permission on the counting
// application for each of a few people in turn: each save is a form post with the session's CSRF token, answered
// by whichever Sign-on instance nginx picks, and queues a push to that application. Every page it lands on is
// recorded; the sign-in page, anywhere after the first, means the administrator was signed out.
import { chromium, type Browser, type Page } from "playwright-core";
import type { Attempt, RequestLog } from "@tessera/test-support/drill";

const chromiumPath = "/usr/bin/chromium";

export interface AdminBrowserRecord {
  /** Per person, the saves in order: whether the permission was ticked, and whether the save came back as saved. */
  saves: Map<string, Attempt<boolean>[]>;
  /** Pages that were the sign-in form (or an error) when a signed-in page was asked for. */
  signedOut: string[];
}

export interface AdminBrowser {
  record: AdminBrowserRecord;
  /** Starts the loop of saves (until `stop`). */
  start(): void;
  /** Stops after the save in progress. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** Signs `email` in at `signonUrl` in a new Chromium, ready to save `permission` of `applicationId` for each of `uids`. */
export async function startAdminBrowser(options: {
  signonUrl: string;
  email: string;
  password: string;
  applicationId: string;
  permission: string;
  uids: readonly string[];
  log: RequestLog;
}): Promise<AdminBrowser> {
  const browser: Browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  const record: AdminBrowserRecord = { saves: new Map(), signedOut: [] };
  let stopped = false;
  let loop: Promise<void> | null = null;
  try {
    const context = await browser.newContext();
    const page: Page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // Each page the browser loads from Sign-on, as the load's requests are recorded.
    page.on("response", (response) => {
      const request = response.request();
      if (request.resourceType() !== "document") return;
      const timing = request.timing();
      const sentAt = Math.round(timing.startTime);
      const path = new URL(response.url()).pathname.replace(/\/users\/[^/]+\//, "/users/:uid/");
      options.log.outcomes.push({
        kind: `Chromium ${request.method()} ${path}`,
        service: "nginx (signon)",
        status: response.status(),
        retryAfter: response.headers()["retry-after"] ?? null,
        detail: null,
        sentAt,
        at: Date.now(),
      });
    });
    page.on("requestfailed", (request) => {
      if (request.resourceType() !== "document") return;
      options.log.outcomes.push({
        kind: `Chromium ${request.method()} ${new URL(request.url()).pathname.replace(/\/users\/[^/]+\//, "/users/:uid/")}`,
        service: "nginx (signon)",
        status: 0,
        retryAfter: null,
        detail: request.failure()?.errorText ?? null,
        sentAt: Date.now(),
        at: Date.now(),
      });
    });
    await page.goto(`${options.signonUrl}/sign-in`);
    await page.fill("#email", options.email);
    await page.fill("#password", options.password);
    await Promise.all([page.waitForURL((url) => url.pathname !== "/sign-in"), page.click('form[action="/sign-in"] button[type="submit"]')]);

    const saveOnce = async (n: number) => {
      const uid = options.uids[n % options.uids.length] as string;
      const permissionsUrl = `${options.signonUrl}/users/${uid}/permissions`;
      const shown = await page.goto(permissionsUrl);
      const box = page.locator(`input[name="permissions"][value="${options.applicationId}:${options.permission}"]`);
      if (shown?.status() !== 200 || new URL(page.url()).pathname !== `/users/${uid}/permissions` || (await box.count()) !== 1) {
        record.signedOut.push(`GET /users/${uid}/permissions landed on ${page.url()} (${shown?.status()})`);
        return;
      }
      const value = !(await box.isChecked());
      await box.setChecked(value);
      const attempts = record.saves.get(uid) ?? [];
      const attempt: Attempt<boolean> = { value, acknowledged: false };
      attempts.push(attempt);
      record.saves.set(uid, attempts);
      const [answer] = await Promise.all([page.waitForNavigation(), page.click('#permissions-form button[type="submit"]')]);
      const landed = new URL(page.url()).pathname;
      if (answer?.status() === 200 && landed !== "/sign-in") attempt.acknowledged = true;
      else record.signedOut.push(`saving the permissions of ${uid} landed on ${page.url()} (${answer?.status()})`);
    };
    return {
      record,
      start() {
        loop = (async () => {
          for (let n = 0; !stopped; n++) {
            try {
              await saveOnce(n);
            } catch (error) {
              record.signedOut.push(`save ${n}: ${(error as Error).message.split("\n")[0]}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })();
      },
      async stop() {
        stopped = true;
        await loop;
      },
      async close() {
        stopped = true;
        await loop;
        await browser.close();
      },
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
}
