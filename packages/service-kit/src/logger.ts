import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * JSON-lines logger. Credentials never reach a log line: the paths below are censored wherever they
 * appear, and request/response bodies and tensors are never passed to a logger in the first place.
 */
export function createLogger(opts: { name: string; level: string; sync?: boolean }): Logger {
  // Asynchronous writes: a synchronous write syscall per line on the request path cost ~5% of a core at
  // 1.4k requests/s. Lines logged while a write is in flight leave together; an idle process writes at
  // once; pino flushes what is pending on exit.
  const destination = pino.destination({ dest: 1, sync: opts.sync ?? false });
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
