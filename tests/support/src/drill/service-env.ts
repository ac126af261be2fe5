// The configuration of Completion and of the editorial app (Sign-on's push receiver) as the drills start them;
// each drill adds what it tunes (read replicas, a statement bound, a trusted proxy).

/** Completion on `databaseUrl`, asking Sign-on at `signonUrl` about tokens as `clientId`, its stale worker every 200 ms. */
export function completionEnv(options: { databaseUrl: string; signonUrl: string; clientId: string }): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    SIGNON_URL: options.signonUrl,
    COMPLETION_SIGNON_CLIENT_ID: options.clientId,
    COMPLETION_STALE_WORKER_INTERVAL_MS: "200",
    LOG_LEVEL: "warn",
  };
}

/** The editorial app at `editorialUrl` on `databaseUrl`, signing in at Sign-on at `signonUrl` with its `client`. */
export function editorialEnv(options: { databaseUrl: string; signonUrl: string; editorialUrl: string; client: { clientId: string; clientSecret: string } }): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    SIGNON_URL: options.signonUrl,
    EDITORIAL_APP_URL: options.editorialUrl,
    EDITORIAL_APP_CLIENT_ID: options.client.clientId,
    EDITORIAL_APP_CLIENT_SECRET: options.client.clientSecret,
    LOG_LEVEL: "warn",
  };
}
