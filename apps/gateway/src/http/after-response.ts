import { ServerResponse } from 'node:http';
import type { InvocationResult } from '@nvcf/queue';
import type { Context } from 'hono';
import type { InvocationOutcome } from '../invocation/invocation-service.ts';

/** The Node response under @hono/node-server (`c.env.outgoing`); undefined elsewhere (`app.request()`). */
export function nodeResponse(c: Context): ServerResponse | undefined {
  const env: unknown = c.env;
  const outgoing = env && typeof env === 'object' && 'outgoing' in env ? env.outgoing : undefined;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/**
 * Runs `done` once the response has been written completely (its last byte handed to the socket), and
 * never when the connection drops before that. Under @hono/node-server the response is `c.env.outgoing`;
 * elsewhere (`app.request()` in tests) there is no socket to wait for, so `done` runs at once.
 */
export function afterResponseWritten(c: Context, done: () => void): void {
  const outgoing = nodeResponse(c);
  if (!outgoing) {
    done();
    return;
  }
  if (outgoing.writableFinished) {
    done();
    return;
  }
  outgoing.once('finish', done);
}

/** A result answer counts as delivered once it is written (see `InvocationService.delivered`). */
export function deliverWhenWritten(
  c: Context,
  outcome: InvocationOutcome,
  delivered: (requestId: string, result: InvocationResult) => Promise<void>,
): void {
  if (outcome.kind === 'result') afterResponseWritten(c, () => void delivered(outcome.requestId, outcome.result));
}
