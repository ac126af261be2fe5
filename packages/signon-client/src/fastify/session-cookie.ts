import type { FastifyReply, FastifyRequest } from "fastify";

/** Reads and writes the session cookie: HttpOnly, SameSite=Lax, Path=/, Secure when configured. */
export class SessionCookie {
  constructor(
    readonly name: string,
    private readonly secure: boolean,
  ) {}

  read(request: FastifyRequest): string | undefined {
    const value = request.cookies[this.name];
    return value === undefined || value === "" ? undefined : value;
  }

  set(reply: FastifyReply, sessionId: string, expiresAt: number): void {
    reply.setCookie(this.name, sessionId, {
      path: "/",
      httpOnly: true,
      sameSite: "lax",
      secure: this.secure,
      expires: new Date(expiresAt),
    });
  }

  clear(reply: FastifyReply): void {
    reply.clearCookie(this.name, { path: "/", httpOnly: true, sameSite: "lax", secure: this.secure });
  }
}
