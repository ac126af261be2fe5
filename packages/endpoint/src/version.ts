declare const __TESSERA_ENDPOINT_VERSION__: string | undefined;

/** The package version, stamped in at build time; source runs without a build report a development version. */
export const VERSION: string =
  typeof __TESSERA_ENDPOINT_VERSION__ === "string" ? __TESSERA_ENDPOINT_VERSION__ : "0.0.0-development";
