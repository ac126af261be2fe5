/** Name under which the global setup provides the broker's URL to test files. */
export const BROKER_KEY = "tesseraTestDatabaseBroker";

declare module "vitest" {
  export interface ProvidedContext {
    tesseraTestDatabaseBroker: string;
  }
}
