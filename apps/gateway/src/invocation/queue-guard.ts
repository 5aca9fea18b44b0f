import { AppError } from '@nvcf/protocol';
import { type InvocationProducer, QueueBytesError } from '@nvcf/queue';

export interface QueueGuard {
  /** RESOURCE_EXHAUSTED (429) when the version's queue already holds `maxDepth` waiting requests. */
  admit(versionId: string): Promise<void>;
  /**
   * RESOURCE_EXHAUSTED (429) when `bytes` more would take what the account's requests hold in the queues (every
   * version together) past `maxAccountBytes`; PAYLOAD_TOO_LARGE (413) when `bytes` alone would.
   */
  admitBytes(account: string, bytes: number): Promise<void>;
}

/** Until space returns: jobs must run first, so sooner is no use. */
const BYTES_RETRY_AFTER_SECONDS = 5;

/**
 * Bounds each function version's queue (NVIDIA's default: 100 000 messages) and the bytes each account keeps
 * waiting in the queues, so that no account can fill Redis for the others (the version's own byte bound is the
 * enqueue script's, exact). The waiting count and an account's bytes are read at most every `cacheMs` per version
 * and per account, and what this gateway admits meanwhile is added to them: under load an exact count per request
 * would cost a round trip each, and a limit this size does not need to be exact to the request.
 */
export function createQueueGuard(
  producer: Pick<InvocationProducer, 'waiting' | 'accountBytes'>,
  opts: { maxDepth: number; maxAccountBytes: number; cacheMs: number },
): QueueGuard {
  const seen = new Map<string, { at: number; waiting: number }>();
  const held = new Map<string, { at: number; bytes: number }>();
  /** One read per account at a time: calls arriving together share it, and so count into one entry. */
  const reads = new Map<string, Promise<{ at: number; bytes: number }>>();
  const heldBy = (account: string): Promise<{ at: number; bytes: number }> => {
    const entry = held.get(account);
    if (entry && Date.now() - entry.at < opts.cacheMs) return Promise.resolve(entry);
    let read = reads.get(account);
    if (!read) {
      const at = Date.now();
      read = producer
        .accountBytes(account)
        .then((bytes) => {
          const fresh = { at, bytes };
          held.set(account, fresh);
          return fresh;
        })
        .finally(() => reads.delete(account));
      reads.set(account, read);
    }
    return read;
  };
  return {
    async admit(versionId) {
      if (opts.maxDepth <= 0) return;
      const now = Date.now();
      let entry = seen.get(versionId);
      if (!entry || now - entry.at >= opts.cacheMs) {
        entry = { at: now, waiting: await producer.waiting(versionId) };
        seen.set(versionId, entry);
      }
      if (entry.waiting >= opts.maxDepth) {
        throw new AppError(
          'RESOURCE_EXHAUSTED',
          `queue of function version '${versionId}' is full (${opts.maxDepth} requests waiting)`,
          {
            retryAfterSeconds: 1,
          },
        );
      }
      entry.waiting++;
    },
    async admitBytes(account, bytes) {
      if (opts.maxAccountBytes <= 0) return;
      // Never admitted, however long the caller waits: not a 429 to retry.
      if (bytes > opts.maxAccountBytes) {
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `the request's ${bytes} bytes are more than an account may keep in the queues (${opts.maxAccountBytes})`,
        );
      }
      const entry = await heldBy(account);
      if (entry.bytes + bytes > opts.maxAccountBytes) {
        throw new AppError(
          'RESOURCE_EXHAUSTED',
          `account '${account}' has ${entry.bytes} bytes of requests in the queues, and ${bytes} more would pass ` +
            `its bound (${opts.maxAccountBytes}); try again once some have run`,
          { retryAfterSeconds: BYTES_RETRY_AFTER_SECONDS },
        );
      }
      entry.bytes += bytes;
    },
  };
}

/** The version's own byte bound, met in the enqueue script, as the same 429; any other error as it is. */
export function queueBytesRefusal(err: unknown): unknown {
  if (!(err instanceof QueueBytesError)) return err;
  return new AppError(
    'RESOURCE_EXHAUSTED',
    `the queue of function version '${err.versionId}' holds its most bytes (${err.maxBytes}); try again once ` +
      'some requests have run',
    { retryAfterSeconds: BYTES_RETRY_AFTER_SECONDS },
  );
}
