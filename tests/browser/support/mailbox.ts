import type { Page } from "playwright-core";
import { expect } from "vitest";

/**
 * Opens Sign-on's development mailbox (`/dev/mail`) in `page`, waits until a
 * mail with `subject` to `to` is listed (reloading), and returns the newest
 * one's text and how many links it shows.
 */
export async function mailFromMailbox(page: Page, signonUrl: string, mail: { to: string; subject: string }): Promise<{ text: string; links: number }> {
  let found: { text: string; links: number } | undefined;
  await expect
    .poll(
      async () => {
        await page.goto(`${signonUrl}/dev/mail`);
        const article = page
          .locator("article")
          .filter({ has: page.getByRole("heading", { name: mail.subject, exact: true }) })
          .filter({ hasText: `To ${mail.to},` })
          .first();
        if ((await article.count()) === 0) return undefined;
        found = { text: (await article.locator("pre").textContent()) ?? "", links: await article.locator("pre a").count() };
        return found;
      },
      { message: `a mail "${mail.subject}" to ${mail.to}`, timeout: 10_000 },
    )
    .toBeTruthy();
  if (found === undefined) throw new Error("unreachable: the poll above found the mail");
  return found;
}

/**
 * The first Sign-on link in the text of the mail with `subject` to `to` (see
 * `mailFromMailbox`), as a person would copy it from the mail.
 */
export async function linkFromMail(page: Page, signonUrl: string, mail: { to: string; subject: string }): Promise<string> {
  const escapedBase = signonUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const link = new RegExp(`${escapedBase}/\\S+`).exec((await mailFromMailbox(page, signonUrl, mail)).text)?.[0];
  if (link === undefined) throw new Error(`the mail "${mail.subject}" to ${mail.to} holds no Sign-on link`);
  return link;
}
