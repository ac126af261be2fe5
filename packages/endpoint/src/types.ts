/** HTTP headers; names are lowercased in every result. */
export type RequestHeaders = Record<string, string | number | undefined>;

/** Media type settings that amend the `accept` header. */
export interface MediaType {
  /** Media type parameter such as `raw`, `diff` or `text+json`. */
  format?: string | undefined;
  /** Preview names (used for `/graphql` requests, as `@octokit/endpoint` does). */
  previews?: string[] | undefined;
}

/** Caller metadata, returned unchanged as `request`. */
export type RequestRequestOptions = Record<string, unknown>;

/**
 * Options accepted by `endpoint()`, `endpoint.merge()` and `endpoint.defaults()`.
 * Keys other than the named ones are parameters: they fill URL placeholders,
 * else go to the query string (GET, HEAD) or the JSON body (other methods).
 */
export interface EndpointOptions {
  method?: string | undefined;
  url?: string | undefined;
  baseUrl?: string | undefined;
  headers?: RequestHeaders | undefined;
  mediaType?: MediaType | undefined;
  data?: unknown;
  request?: RequestRequestOptions | undefined;
  [parameter: string]: unknown;
}

/** Options after `endpoint.merge()`: defaults applied, nothing parsed yet. */
export interface MergedOptions extends EndpointOptions {
  method: string;
  baseUrl: string;
  headers: RequestHeaders;
  mediaType: MediaType;
}

/** The default options of an endpoint function (`endpoint.DEFAULTS`). */
export interface EndpointDefaults extends MergedOptions {
  headers: RequestHeaders & { accept: string; "user-agent": string };
  mediaType: { format: string; previews?: string[] | undefined };
}

/** What `endpoint()` returns: everything an HTTP client needs to send the request. */
export interface RequestOptions {
  /** Uppercase HTTP method, as `@octokit/endpoint` returns it. */
  method: string;
  /** Full URL: placeholders replaced, query parameters appended. */
  url: string;
  headers: Record<string, string | number>;
  /** Present for requests with a body (and always for PATCH and PUT). */
  body?: unknown;
  /** The `request` option, as passed. */
  request?: RequestRequestOptions;
}

/** An endpoint function with its defaults and helpers. */
export interface Endpoint {
  /** Builds request options from a `"<METHOD> <url>"` route and parameters. */
  (route: string, options?: EndpointOptions): RequestOptions;
  /** Builds request options from an options object that carries `url` (and usually `method`). */
  (options: EndpointOptions): RequestOptions;
  /** The defaults this function applies. */
  DEFAULTS: EndpointDefaults;
  /** A new endpoint function whose defaults are these defaults amended by `options`. */
  defaults(options: EndpointOptions): Endpoint;
  /** Applies the defaults without parsing. */
  merge(route: string, options?: EndpointOptions): MergedOptions;
  merge(options: EndpointOptions): MergedOptions;
  /** Turns merged options into request options. */
  parse(options: MergedOptions): RequestOptions;
}
