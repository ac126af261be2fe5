import type { FastifyReply } from "fastify";

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Sends a minimal HTML page: the kit's default for sign-in failures and 403s. */
export function sendPage(reply: FastifyReply, status: number, title: string, bodyHtml: string): FastifyReply {
  return reply
    .code(status)
    .type("text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
        `<body><main><h1>${escapeHtml(title)}</h1>${bodyHtml}</main></body></html>`,
    );
}
