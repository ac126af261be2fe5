import type { FastifyInstance } from "fastify";

/** `GET /api/me` (Sign-on bearer token): the token's user, as Sign-on describes it to this application. */
export async function apiMeRoutes(app: FastifyInstance): Promise<void> {
  app.get("/api/me", { onRequest: app.signonClient.requireBearerToken() }, async (request) => {
    const user = request.signonApiUser;
    if (!user) throw new Error("requireBearerToken let a request without a user through");
    return {
      user: {
        uid: user.uid,
        name: user.name,
        email: user.email,
        permissions: user.permissions,
        organisation_slug: user.organisationSlug,
        organisation_content_id: user.organisationContentId,
      },
    };
  });
}
