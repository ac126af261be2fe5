import type { Transporter } from "nodemailer";
import type { SignonConfig } from "../config.js";
import { runInBackground } from "../background-work.js";
import type { SignonContext } from "../context.js";
import { insertDevMail } from "../repositories/dev-mails.js";

/** A plain-text e-mail to one person. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

const transports = new WeakMap<SignonConfig, Transporter>();

/** The SMTP transport of `config`; nodemailer is loaded with the first one (an installation without SMTP never needs it). */
async function smtpTransport(config: SignonConfig, smtpUrl: string): Promise<Transporter> {
  let transport = transports.get(config);
  if (!transport) {
    const { default: nodemailer } = await import("nodemailer");
    transport = transports.get(config) ?? nodemailer.createTransport(smtpUrl);
    transports.set(config, transport);
  }
  return transport;
}

/**
 * Sends a mail by SMTP when `SIGNON_SMTP_URL` is set. Otherwise keeps it in
 * the development mailbox (`/dev/mail`) and, in development, prints it to the
 * console, so a local installation needs no mail server.
 */
export async function sendMail(ctx: SignonContext, message: MailMessage): Promise<void> {
  const { mail } = ctx.config;
  if (mail.smtpUrl !== null) {
    await (await smtpTransport(ctx.config, mail.smtpUrl)).sendMail({ from: mail.from, to: message.to, subject: message.subject, text: message.text });
    return;
  }
  await insertDevMail(ctx.db, { recipient: message.to, subject: message.subject, textBody: message.text, createdAt: ctx.now() });
  if (mail.printToConsole) {
    process.stdout.write(`\n--- mail to ${message.to}: ${message.subject}\n${message.text}\n--- (also at /dev/mail)\n\n`);
  }
}

/**
 * Sends a mail without making the caller wait for the SMTP server, so the
 * answer to a request takes as long whether or not a mail was sent. A
 * failure goes to `onFailure` (never an unhandled rejection). The
 * development mailbox is a quick local insert and is awaited.
 */
export async function sendMailInBackground(ctx: SignonContext, message: MailMessage, onFailure: (error: unknown) => void): Promise<void> {
  if (ctx.config.mail.smtpUrl !== null) {
    runInBackground(() => sendMail(ctx, message), onFailure);
    return;
  }
  try {
    await sendMail(ctx, message);
  } catch (error) {
    try {
      onFailure(error);
    } catch {
      // A failing reporter must not turn into an unhandled rejection.
    }
  }
}

/** `text` with every e-mail address in it replaced (an SMTP server's "550 <someone@example.org> rejected" names it). */
function withoutAddresses(text: string): string {
  return text.replace(/[^\s<>"'(),;:@]+@[^\s<>"'(),;:@]+/g, "<address>");
}

/**
 * What to log about a mail that could not be sent: the error's message and
 * SMTP code, command and response code, never the message text (it can
 * carry a link token) nor an e-mail address (the server's answer may quote it).
 */
export function mailErrorForLog(error: unknown): { message: string; code?: string; command?: string; responseCode?: number } {
  if (!(error instanceof Error)) return { message: withoutAddresses(String(error)) };
  const { code, command, responseCode } = error as Error & { code?: unknown; command?: unknown; responseCode?: unknown };
  return {
    message: withoutAddresses(error.message),
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof command === "string" ? { command } : {}),
    ...(typeof responseCode === "number" ? { responseCode } : {}),
  };
}
