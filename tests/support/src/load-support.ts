// What the suites that load the system as shipped share: a browser's cookie jar over fetch, the small course
// they import into Completion before the load, and a server that answers every request 200.
import { createServer, type Server } from "node:http";

/** The cookies a browser keeps: the `Cookie` header for the next request, and what each answer sets or clears. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  /** The `Cookie` header, or null when the jar is empty. */
  header(): string | null {
    return this.#cookies.size === 0 ? null : [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  /** Keeps what `response` sets, and forgets what it clears (an empty value or `Max-Age=0`). */
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const equals = pair.indexOf("=");
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      if (value === "" || /max-age=0/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
}

/**
 * Imports into Completion (`PUT /api/completion/v1/admin/import` with an admin's token) one course of one chapter,
 * one sequential and one vertical holding a problem per key of `problems` (ids p0, p1, …), and `learners`, each
 * enrolled (ids from 1, addresses at example.org).
 */
export async function importSmallCourse(completionUrl: string, token: string, course: { key: string; problems: readonly string[]; learners: readonly string[] }): Promise<void> {
  const vertical = { type: "vertical", id: "v", children: course.problems.map((_, n) => ({ type: "problem", id: `p${n}` })) };
  const imported = await fetch(`${completionUrl}/api/completion/v1/admin/import`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      courses: [{ course_key: course.key, structure: { type: "course", id: "course", children: [{ type: "chapter", id: "ch", children: [{ type: "sequential", id: "seq", children: [vertical] }] }] } }],
      users: course.learners.map((username, n) => ({ id: n + 1, username, email: `${username}@example.org` })),
      enrollments: course.learners.map((username) => ({ username, course_key: course.key })),
    }),
  });
  if (imported.status !== 200) throw new Error(`import failed: ${imported.status} ${await imported.text()}`);
}

/** A server on a free loopback port that answers every request 200 with `{}`: an OAuth client's redirect URI, a push base. */
export async function startSink(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { server, url: `http://127.0.0.1:${address.port}` };
}
