import { type EventStream, failureResult, type InvocationProducer, type RequestStore } from '@nvcf/queue';
import type { RequestAccess } from './invocation-service.ts';

/**
 * `cancelled`: it is now; `finished`: it had an answer already (kept as it was); `unknown`: no such request, or one
 * the caller may not see.
 */
export type CancelOutcome = 'cancelled' | 'finished' | 'unknown';

export interface RequestCancellation {
  /**
   * Cancels a queued or running request for its owner. Its answer becomes a 499 problem (what every poll, stream
   * and long-poll of it gets from now on, on any gateway); a job still waiting leaves the queue; a running one
   * hears it as it hears a streaming client leave (a decoupled model stops between responses), and whatever it
   * answers later is discarded. `authorize` is shown the request before anything changes (false: `unknown`; or it
   * throws).
   */
  cancel(requestId: string, authorize: (request: RequestAccess) => Promise<boolean>): Promise<CancelOutcome>;
}

export interface RequestCancellationDeps {
  store: RequestStore;
  producer: Pick<InvocationProducer, 'withdraw'>;
  events: Pick<EventStream, 'cancel'>;
}

export function createRequestCancellation(deps: RequestCancellationDeps): RequestCancellation {
  const { store, producer, events } = deps;
  return {
    async cancel(requestId, authorize) {
      const owner = await store.owner(requestId);
      if (!owner || !(await authorize({ requestId, ...owner }))) return 'unknown';
      const detail = `request '${requestId}' was cancelled by its owner`;
      // The answer first: the request store's first writer wins, so a worker finishing at the same moment
      // either answered first (then nothing is cancelled) or finds its answer discarded.
      const cancelled = failureResult('CANCELLED', detail, { source: 'nvcf-gateway', requestId });
      const stored = await store.complete(requestId, cancelled);
      if (!stored) return (await store.peek(requestId)).kind === 'missing' ? 'unknown' : 'finished';
      const [, withdrawn] = await Promise.all([
        events.cancel(requestId),
        producer.withdraw(owner.versionId, requestId),
      ]);
      // No worker will read a withdrawn job's input: drop it now rather than at its TTL.
      if (withdrawn) await store.dropInput(requestId);
      return 'cancelled';
    },
  };
}
