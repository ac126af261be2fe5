import type { FastifyReply, FastifyRequest } from "fastify";

/** Whether a request is a browser loading a page: a GET or HEAD that accepts HTML. */
export function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  return /(^|[\s,])text\/html([\s;,]|$)/i.test(request.headers.accept ?? "");
}

/** A 404 for an address nothing answers: an HTML page for a browser, `{"error":"not_found"}` for an API caller. */
export async function answerNotFound(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.code(404).header("cache-control", "no-store");
  if (!wantsPage(request)) return reply.send({ error: "not_found" });
  return reply.view("error.eta", { title: "Page not found", message: "There is no page at this address. It may have been mistyped, or the page has moved." });
}
