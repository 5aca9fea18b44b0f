import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * JSON-lines logger. Credentials never reach a log line: the paths below are censored wherever they
 * appear, and request/response bodies and tensors are never passed to a logger in the first place.
 */
export function createLogger(opts: { name: string; level: string }): Logger {
  return pino({
    name: opts.name,
    level: opts.level,
    redact: {
      paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'apiKey', '*.apiKey'],
      censor: '[redacted]',
    },
  });
}
