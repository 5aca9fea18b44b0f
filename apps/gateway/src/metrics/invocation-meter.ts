import type { CompletionWaiter, InvocationProducer, InvocationResult, RequestStore } from '@nvcf/queue';
import type { InvocationOutcome, InvocationService } from '../invocation/invocation-service.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

interface Tracked {
  functionId: string;
  versionId: string;
  /** When this gateway accepted it (absent: another gateway did, this one only polls it). */
  acceptedAt?: number;
  /** Its latency was observed (once per request). */
  ready?: boolean;
  /** The HTTP status of the final answer handed out, counted once the client has it. */
  status?: string;
}

/**
 * Decorators that count invocations without touching the invocation path: the service keeps its own deps,
 * each wrapped here to note what it already learns (the version a request was queued on, the owner read
 * before a poll, the completion reaching a waiter, the answer handed out).
 *
 * - accepted: counted when `enqueue` queues a request;
 * - latency: from accepting to the completion reaching a waiter on this gateway (a client waiting on the
 *   pexec call itself or on a long-poll); a result nobody waited for here is not observed, since this
 *   gateway never learns when it became ready. An event stream usually ends on its last event, before the
 *   completion arrives, so streamed answers are mostly not observed either;
 * - finished: counted when the final answer has been written to the client (`delivered`), once per
 *   request, labelled by the status the client saw (302 for a stored large result); an answer streamed as
 *   events (SSE) when the stream takes it (`streamDelivered`), labelled by the function's status.
 *
 * At most `maxTracked` requests are remembered (the oldest forgotten first): a request accepted here and
 * polled elsewhere is never delivered here.
 */
export function createInvocationMeter(metrics: GatewayMetrics, opts: { maxTracked: number }) {
  const tracked = new Map<string, Tracked>();
  const labels = (t: Tracked) => ({ function_id: t.functionId, function_version_id: t.versionId });

  const track = (requestId: string, entry: Tracked) => {
    if (tracked.size >= opts.maxTracked) {
      const oldest = tracked.keys().next();
      if (!oldest.done) tracked.delete(oldest.value);
    }
    tracked.set(requestId, entry);
  };

  const ready = (requestId: string) => {
    const t = tracked.get(requestId);
    if (!t || t.acceptedAt === undefined || t.ready) return;
    t.ready = true;
    metrics.latency.observe(labels(t), (Date.now() - t.acceptedAt) / 1000);
  };

  const finished = (requestId: string, t: Tracked, status: string) => {
    tracked.delete(requestId);
    metrics.finished.inc({ ...labels(t), status });
  };

  const answered = (outcome: InvocationOutcome, fallback?: Tracked) => {
    if (outcome.kind !== 'result') return;
    const t = tracked.get(outcome.requestId) ?? fallback;
    if (!t) return;
    t.status = outcome.result.objectKey ? '302' : String(outcome.result.status);
    tracked.set(outcome.requestId, t);
  };

  return {
    producer: (producer: InvocationProducer): InvocationProducer => ({
      ...producer,
      async enqueue(job, to) {
        // Noted before the add: a fast worker's completion can reach a waiter before `enqueue` returns.
        track(job.requestId, { functionId: job.functionId, versionId: job.versionId, acceptedAt: Date.now() });
        const queued = await producer.enqueue(job, to).catch((err: unknown) => {
          tracked.delete(job.requestId);
          throw err;
        });
        if (queued) metrics.accepted.inc({ function_id: job.functionId, function_version_id: job.versionId });
        else tracked.delete(job.requestId);
        return queued;
      },
    }),

    store: (store: RequestStore): RequestStore => ({
      ...store,
      async owner(requestId) {
        const owner = await store.owner(requestId);
        if (owner && !tracked.has(requestId)) {
          track(requestId, { functionId: owner.functionId, versionId: owner.versionId });
        }
        return owner;
      },
    }),

    completions: (completions: CompletionWaiter): CompletionWaiter => ({
      ...completions,
      gatewayId: completions.gatewayId,
      register(requestId, deadline, signal) {
        const waiter = completions.register(requestId, deadline, signal);
        void waiter.outcome.then((o) => {
          if (o.kind === 'completed') ready(requestId);
        });
        return waiter;
      },
    }),

    service: (service: InvocationService): InvocationService => ({
      ...service,
      async invoke(req) {
        const outcome = await service.invoke(req);
        answered(outcome, { functionId: req.functionId, versionId: req.versionId ?? '' });
        return outcome;
      },
      async status(requestId, pollSeconds, o) {
        const outcome = await service.status(requestId, pollSeconds, o);
        answered(outcome);
        return outcome;
      },
      delivered(requestId) {
        const t = tracked.get(requestId);
        if (t?.status) finished(requestId, t, t.status);
        return service.delivered(requestId);
      },
    }),

    /** An event stream handed the request's answer out (see `EventStreamDeps.onDelivered`). */
    streamDelivered(requestId: string, result: InvocationResult) {
      const t = tracked.get(requestId);
      if (t) finished(requestId, t, result.objectKey ? '302' : String(result.status));
    },
  };
}
