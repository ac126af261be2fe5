import type { Page } from "playwright-core";
import { expect } from "vitest";

/**
 * Opens Sign-on's development mailbox (`/dev/mail`) in `page`, waits until a
 * mail with `subject` to `to` is listed (reloading), and returns the first
 * Sign-on link in its text, as a person would copy it from the mail.
 */
export async function linkFromMail(page: Page, signonUrl: string, mail: { to: string; subject: string }): Promise<string> {
  const escapedBase = signonUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const linkPattern = new RegExp(`${escapedBase}/\\S+`);
  let link: string | undefined;
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
        link = linkPattern.exec((await article.locator("pre").textContent()) ?? "")?.[0];
        return link;
      },
      { message: `a mail "${mail.subject}" to ${mail.to} with a link`, timeout: 10_000 },
    )
    .toBeTruthy();
  if (link === undefined) throw new Error("unreachable: the poll above found a link");
  return link;
}
