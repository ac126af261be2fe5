/** Options that configure the request itself: they are never URL variables, query parameters or body keys. */
export const OPTION_NAMES: ReadonlySet<string> = new Set(["method", "baseUrl", "url", "headers", "request", "mediaType"]);
