import type { EndpointDefaults } from "./types.js";
import { VERSION } from "./version.js";

/** The defaults of the exported `endpoint` (decision E2). */
export const DEFAULTS: EndpointDefaults = {
  method: "GET",
  baseUrl: "http://localhost:3000",
  headers: {
    accept: "application/vnd.tessera.v3+json",
    "user-agent": `tessera-endpoint.js/${VERSION}`,
  },
  mediaType: {
    format: "",
  },
};
