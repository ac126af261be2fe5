/** The smallest surface both libraries share: a callable endpoint with `.defaults()`. */
export interface EndpointLike {
  (route: string, options?: Record<string, unknown>): { url: string };
  defaults(options: Record<string, unknown>): EndpointLike;
}

/** One benchmark case: builds request options with the given library. */
export interface BenchCase {
  name: string;
  /** Prepares the call once (outside the timed loop) and returns it. */
  prepare(library: EndpointLike): () => { url: string };
}

export const CASES: BenchCase[] = [
  {
    name: "GET, two path parameters and a query parameter",
    prepare: (library) => () => library("GET /repos/{owner}/{repo}/issues", { owner: "alphagov", repo: "signon", state: "open" }),
  },
  {
    name: "POST with a JSON body",
    prepare: (library) => () =>
      library("POST /repos/{owner}/{repo}/issues", { owner: "alphagov", repo: "signon", title: "Suspend user", body: "Details", labels: ["bug"] }),
  },
  {
    name: "GET, search query with spaces and colons",
    prepare: (library) => () => library("GET /search/issues", { q: "is:open label:bug author:ada lovelace", per_page: 50 }),
  },
  {
    name: "GET through a .defaults()-derived endpoint",
    prepare: (library) => {
      const signon = library.defaults({ baseUrl: "https://signon.example.org", headers: { authorization: "Bearer token" } });
      return () => signon("GET /users/{uid}/permissions", { uid: "6f1c2d3e", page: 2 });
    },
  },
];
