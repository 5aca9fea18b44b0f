import { NvcfConnectionError, NvcfError } from '@nvcf/client';
import { CommanderError } from 'commander';
import { terminalText } from './terminal-text.ts';

/** `nvcf`'s exit codes, as `nvcf --help` and the README list them. */
export const EXIT = {
  OK: 0,
  /** The gateway refused the call (4xx), or a local file or input could not be used. */
  CLIENT: 1,
  /** Bad usage: an unknown command or option, a missing or malformed argument. */
  USAGE: 2,
  /** The gateway failed (5xx) or could not be reached. */
  SERVER: 3,
  /** Interrupted (Ctrl-C): 128 + SIGINT, as shells report it. */
  INTERRUPTED: 130,
} as const;

/** A command line that cannot run as given (exit 2), said before anything is sent. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Ctrl-C: the abort reason of a command's signal, so the call it stops can be told from a failure. */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';
  /** The request it interrupted, when the gateway had told it (the SDK's abort cancelled it on the gateway). */
  readonly requestId: string | undefined;
  constructor(requestId?: string) {
    super('interrupted');
    this.requestId = requestId;
  }
}

export function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  if (err instanceof UsageError) return EXIT.USAGE;
  if (err instanceof InterruptedError) return EXIT.INTERRUPTED;
  if (err instanceof NvcfError) return err.status >= 500 ? EXIT.SERVER : EXIT.CLIENT;
  if (err instanceof NvcfConnectionError) return EXIT.SERVER;
  return EXIT.CLIENT;
}

/** The innermost cause's code or message (fetch says only "fetch failed"; its cause says ECONNREFUSED). */
function rootCause(err: Error): string | undefined {
  let cause: unknown = err.cause;
  let said: string | undefined;
  while (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code;
    said = typeof code === 'string' ? code : cause.message;
    cause = cause.cause;
  }
  return said;
}

/**
 * The one line an error prints on stderr: `nvcf: <title>: <detail> (request <reqId>)`, escaped (`terminalText`): a
 * detail can quote a name another account chose.
 */
export function formatError(err: unknown): string {
  return terminalText(errorLine(err));
}

function errorLine(err: unknown): string {
  if (err instanceof NvcfError) {
    const detail = err.detail ? `: ${err.detail}` : '';
    const request = err.requestId ? ` (request ${err.requestId})` : '';
    return `nvcf: ${err.title}${detail}${request}`;
  }
  if (err instanceof NvcfConnectionError) {
    const cause = rootCause(err);
    return `nvcf: cannot reach the gateway: ${err.message}${cause ? ` (${cause})` : ''}`;
  }
  if (err instanceof UsageError) return `nvcf: ${err.message} (see --help)`;
  // The SDK cancelled the request on its way out (its abort does): say which, for `nvcf status` to confirm.
  if (err instanceof InterruptedError)
    return `nvcf: interrupted${err.requestId ? ` (request ${err.requestId} cancelled)` : ''}`;
  return `nvcf: ${err instanceof Error ? err.message : String(err)}`;
}
