import { AppError } from '@nvcf/protocol';
import type { MiddlewareHandler } from 'hono';
import type { AuthEnv } from '../auth/auth-middleware.ts';
import { principalKey } from '../auth/principal.ts';
import { nodeResponse } from './after-response.ts';

/**
 * At most `max` open long-polls and event streams per credential (`principalKey`) on this gateway: each holds a socket,
 * a waiter and (for streams) a Redis read loop for up to an hour, so one client must not be able to
 * hold them all. A call over the cap is a 429 with `Retry-After`; the slot frees when the response is
 * done or the connection drops. 0 disables the cap.
 */
export function openWaitLimit(max: number): MiddlewareHandler<AuthEnv> {
  const open = new Map<string, number>();
  return async (c, next) => {
    if (max <= 0) return next();
    const subject = principalKey(c.get('principal'));
    const count = open.get(subject) ?? 0;
    if (count >= max) {
      throw new AppError('RESOURCE_EXHAUSTED', `too many open requests for this credential (at most ${max} at once)`, {
        retryAfterSeconds: 1,
      });
    }
    open.set(subject, count + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (open.get(subject) ?? 1) - 1;
      if (n <= 0) open.delete(subject);
      else open.set(subject, n);
    };
    const outgoing = nodeResponse(c);
    try {
      await next();
    } finally {
      // A streamed body outlives the handler: the slot is held until the response is closed.
      if (outgoing && !outgoing.closed) outgoing.once('close', release);
      else release();
    }
  };
}
