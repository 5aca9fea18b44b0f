import type { InvocationEvents, InvocationLabels } from '../invocation/invocation-events.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

interface Tracked {
  functionId: string;
  versionId: string;
  /** When this gateway accepted it (absent: another gateway did, this one only follows it). */
  acceptedAt?: number;
  /** Its latency was observed (once per request). */
  ready?: boolean;
}

/**
 * Counts invocations from the invocation service's lifecycle events:
 *
 * - accepted: counted once the request is `queued`;
 * - latency: from `accepted` to `completed` (the completion reaching a waiter on this gateway: a client waiting on
 *   the pexec call itself or on a long-poll); a result nobody waited for here is not observed, since this gateway
 *   never learns when it became ready. An event stream usually ends on its last event, before the completion
 *   arrives, so streamed answers are mostly not observed either;
 * - finished: counted at `delivered`, once per request, labelled by the status the client saw (302 for a stored
 *   large result; an answer streamed as events by the function's status).
 *
 * The function and version of a request come from its `accepted` or `followed` event; at most `maxTracked`
 * requests are remembered (the oldest forgotten first): a request accepted here and polled elsewhere is never
 * delivered here. Returns the unsubscribe.
 */
export function subscribeInvocationMetrics(
  events: InvocationEvents,
  metrics: GatewayMetrics,
  opts: { maxTracked: number },
): () => void {
  const tracked = new Map<string, Tracked>();
  const labels = (t: Omit<InvocationLabels, 'requestId'>) => ({
    function_id: t.functionId,
    function_version_id: t.versionId,
  });

  const track = (requestId: string, entry: Tracked) => {
    if (tracked.size >= opts.maxTracked) {
      const oldest = tracked.keys().next();
      if (!oldest.done) tracked.delete(oldest.value);
    }
    tracked.set(requestId, entry);
  };

  const stops = [
    events.on('accepted', (e) =>
      track(e.requestId, { functionId: e.functionId, versionId: e.versionId, acceptedAt: e.at }),
    ),
    events.on('queued', (e) => metrics.accepted.inc(labels(e))),
    events.on('failed', (e) => void tracked.delete(e.requestId)),
    events.on('followed', (e) => {
      if (!tracked.has(e.requestId)) track(e.requestId, { functionId: e.functionId, versionId: e.versionId });
    }),
    events.on('completed', (e) => {
      const t = tracked.get(e.requestId);
      if (!t || t.acceptedAt === undefined || t.ready) return;
      t.ready = true;
      metrics.latency.observe(labels(t), (e.at - t.acceptedAt) / 1000);
    }),
    events.on('delivered', (e) => {
      const t = tracked.get(e.requestId);
      if (!t) return;
      tracked.delete(e.requestId);
      metrics.finished.inc({ ...labels(t), status: String(e.status) });
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}
