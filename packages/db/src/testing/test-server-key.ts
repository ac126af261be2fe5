/** Name under which the global setup provides the test server's URL to test files. */
export const TEST_SERVER_KEY = "tesseraTestServer";

declare module "vitest" {
  export interface ProvidedContext {
    tesseraTestServer: string;
  }
}
