import type { FastifyReply, FastifyRequest } from "fastify";
import { page } from "../views/layout.js";

/** Whether a request is a browser loading a page: a GET or HEAD that accepts HTML (as Sign-on decides). */
export function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  return /(^|[\s,])text\/html([\s;,]|$)/i.test(request.headers.accept ?? "");
}

/**
 * A 404 for an address nothing answers: a page of the application for a
 * browser, with ways back; `{"error":"not_found","error_description"}` for
 * an API caller.
 */
export async function answerNotFound(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.code(404).header("cache-control", "no-store");
  if (!wantsPage(request)) return reply.send({ error: "not_found", error_description: "Nothing is at this address." });
  const body = `<p>There is no page at this address. It may have been mistyped, or the page has moved.</p>
<p class="way-back"><a href="/">Back to the home page</a></p>`;
  return reply.type("text/html; charset=utf-8").send(page("Page not found", body));
}
