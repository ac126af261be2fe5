/**
 * The part of a logger this package writes to. Fastify's and pino's loggers
 * fit, and so does `console`.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

/** A logger that drops everything: the default when none is passed in. */
export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
};
