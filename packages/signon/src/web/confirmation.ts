import { Type } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { renderPage } from "./page.js";

/**
 * The field that marks a post as sent from a confirmation page. An
 * irreversible action acts only when it is `yes`: a post without it (an old
 * one-click form, a forged or replayed request) gets the confirmation page.
 */
export const confirmField = { confirm: Type.Optional(Type.String({ maxLength: 16 })) };

/** Whether a form body came from a confirmation page's Confirm button. */
export function isConfirmed(body: { confirm?: string | undefined }): boolean {
  return body.confirm === "yes";
}

/** A text field asked for on the confirmation page itself (the reason for a suspension). */
export interface ConfirmationTextField {
  name: string;
  label: string;
  hint?: string;
  maxLength: number;
  value: string;
  error?: string;
}

/** What a confirmation page says and where its forms lead. */
export interface ConfirmationPage {
  /** The heading and title, naming the action and what it acts on: "Retire Publisher". */
  title: string;
  /** What will happen, one sentence each, exactly as it will. */
  consequences: string[];
  /** Whether and how it can be undone: "This cannot be undone." */
  finality: string;
  /** Where the confirm form posts (the action's own address). */
  action: string;
  /** The Confirm button's words: "Retire Publisher". */
  confirmLabel: string;
  /** Where Cancel leads back to, and what it says ("Cancel: back to Publisher"). */
  cancel: { href: string; label: string };
  field?: ConfirmationTextField;
}

/**
 * Renders the second step of an irreversible action: a page naming what will
 * happen, with a form that posts `confirm=yes` and the CSRF token, and a way
 * back. `unconfirmed`: the page answers a post that lacked the confirmation
 * (400, and it says that nothing has changed yet).
 */
export function renderConfirmation(
  request: FastifyRequest,
  reply: FastifyReply,
  page: ConfirmationPage,
  options: { unconfirmed?: boolean; status?: number } = {},
): Promise<FastifyReply> {
  const errorSummary: { field: string; message: string }[] = [];
  if (options.unconfirmed) errorSummary.push({ field: "confirm", message: `Nothing has changed yet: check what will happen, then select “${page.confirmLabel}”.` });
  if (page.field?.error) errorSummary.push({ field: page.field.name, message: page.field.error });
  const status = options.status ?? (errorSummary.length > 0 ? 400 : 200);
  return renderPage(request, reply, "confirm.eta", { ...page, errorSummary }, status);
}
