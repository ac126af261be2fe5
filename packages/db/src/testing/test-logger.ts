import type { Logger } from "../logger.js";

/**
 * Logger of test servers: warnings (a stalled session, a failed server) go to
 * the test output, where a hanging test needs them.
 */
export const testLogger: Logger = {
  info: () => {},
  warn: (message) => console.warn(message),
};
