import { AppError } from '@nvcf/protocol';
import type { InvocationProducer } from '@nvcf/queue';

export interface QueueGuard {
  /** RESOURCE_EXHAUSTED (429) when the version's queue already holds `maxDepth` waiting requests. */
  admit(versionId: string): Promise<void>;
}

/**
 * Bounds each function version's queue (NVIDIA's default: 100 000 messages). The waiting count is read
 * at most every `cacheMs` per version: under load an exact count per request would cost a round trip
 * each, and a limit this size does not need to be exact to the request.
 */
export function createQueueGuard(
  producer: InvocationProducer,
  opts: { maxDepth: number; cacheMs: number },
): QueueGuard {
  const seen = new Map<string, { at: number; waiting: number }>();
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
  };
}
