import type { LightMyRequestResponse } from "fastify";
import { settleBackgroundWork } from "../../src/background-work.js";
import type { SignonContext } from "../../src/context.js";
import { listDevMails, type DevMail } from "../../src/repositories/dev-mails.js";
import { decodeEntities } from "../support/browser.js";

/** Mails kept by the development mailbox for this address, oldest first (once the work begun after answers has ended). */
export async function mailsTo(ctx: SignonContext, address: string): Promise<DevMail[]> {
  await settleBackgroundWork(10_000);
  return (await listDevMails(ctx.db, 1000)).filter((mail) => mail.recipient === address).sort((a, b) => a.id - b.id);
}

/** The path of the link (`/invitations/…`, `/password-reset/…`, …) in the newest mail to this address. */
export async function linkMailedTo(
  ctx: SignonContext,
  address: string,
  prefix: "/invitations/" | "/password-reset/" | "/unlock/" | "/account/email/",
): Promise<string> {
  const mail = (await mailsTo(ctx, address)).at(-1);
  if (!mail) throw new Error(`no mail to ${address}`);
  const match = new RegExp(`http://localhost:3000(${prefix}[0-9a-f]{64})`).exec(mail.textBody);
  if (!match?.[1]) throw new Error(`no ${prefix} link in:\n${mail.textBody}`);
  return match[1];
}

/** The visible text of a page: tags removed, entities decoded, spaces collapsed. */
export function textOf(response: LightMyRequestResponse): string {
  return decodeEntities(response.body.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ");
}

/** A password that passes the policy, different on each call. */
let passwords = 0;
export function strongPassword(): string {
  passwords += 1;
  return `lantern ${["orbit", "meadow", "quartz", "saffron", "tundra", "violet"][passwords % 6]} pickle ${passwords} harbour`;
}
