import { describe, expect, it } from 'vitest';
import { createInvocationEvents } from '../invocation/invocation-events.ts';
import { createGatewayMetrics } from './gateway-metrics.ts';
import { subscribeInvocationMetrics } from './invocation-metrics.ts';

const F = 'f-1';
const V = 'v-1';
const VERSION = { function_id: F, function_version_id: V };

/** A fresh registry and event source with the subscriber on them; listener failures fail the test. */
function setup(maxTracked = 100) {
  const metrics = createGatewayMetrics();
  const events = createInvocationEvents((err) => {
    throw err;
  });
  const stop = subscribeInvocationMetrics(events, metrics, { maxTracked });
  const value = async (name: string, labels: Record<string, string>, sample = name) => {
    const metric = await metrics.registry.getSingleMetric(name)?.get();
    const match = metric?.values.find(
      (v) =>
        ('metricName' in v ? v.metricName : name) === sample &&
        Object.entries(labels).every(([k, l]) => v.labels[k] === l),
    );
    return match?.value ?? 0;
  };
  const LATENCY = 'nvcf_gateway_invocation_duration_seconds';
  return {
    events,
    stop,
    accepted: () => value('nvcf_gateway_invocations_accepted_total', VERSION),
    finished: (status: string) => value('nvcf_gateway_invocations_total', { ...VERSION, status }),
    latencyCount: () => value(LATENCY, VERSION, `${LATENCY}_count`),
    latencySum: () => value(LATENCY, VERSION, `${LATENCY}_sum`),
  };
}

/** The events of a request this gateway accepted at `at` and queued. */
function acceptAndQueue(events: ReturnType<typeof setup>['events'], requestId: string, at: number) {
  events.emit('accepted', { requestId, functionId: F, versionId: V, at });
  events.emit('queued', { requestId, functionId: F, versionId: V });
}

describe('invocation metrics from lifecycle events', () => {
  it('counts a request once queued, its latency from accepted to completed, and its delivery once', async () => {
    const m = setup();
    acceptAndQueue(m.events, 'r1', 1_000);
    expect(await m.accepted()).toBe(1);
    m.events.emit('completed', { requestId: 'r1', at: 2_500 });
    // A second waiter on this gateway (a long-poll after the pexec call) hears the same completion: observed once.
    m.events.emit('completed', { requestId: 'r1', at: 3_000 });
    expect(await m.latencyCount()).toBe(1);
    expect(await m.latencySum()).toBeCloseTo(1.5);
    m.events.emit('delivered', { requestId: 'r1', status: 200, streamed: false });
    m.events.emit('delivered', { requestId: 'r1', status: 200, streamed: false });
    expect(await m.finished('200')).toBe(1);
  });

  it('observes a completion that beat the add (a fast worker): accepted came first', async () => {
    const m = setup();
    m.events.emit('accepted', { requestId: 'r1', functionId: F, versionId: V, at: 1_000 });
    m.events.emit('completed', { requestId: 'r1', at: 1_010 });
    m.events.emit('queued', { requestId: 'r1', functionId: F, versionId: V });
    expect(await m.latencyCount()).toBe(1);
    expect(await m.accepted()).toBe(1);
  });

  it('forgets a request the add did not queue: not accepted, no latency, no delivery', async () => {
    const m = setup();
    m.events.emit('accepted', { requestId: 'r1', functionId: F, versionId: V, at: 1_000 });
    m.events.emit('failed', { requestId: 'r1', error: new Error('queue full') });
    m.events.emit('completed', { requestId: 'r1', at: 2_000 });
    m.events.emit('delivered', { requestId: 'r1', status: 200, streamed: false });
    expect(await m.accepted()).toBe(0);
    expect(await m.latencyCount()).toBe(0);
    expect(await m.finished('200')).toBe(0);
  });

  it('counts the delivery of a request another gateway accepted, with no latency (its start is unknown here)', async () => {
    const m = setup();
    m.events.emit('followed', { requestId: 'r1', functionId: F, versionId: V });
    m.events.emit('completed', { requestId: 'r1', at: 2_000 });
    m.events.emit('delivered', { requestId: 'r1', status: 302, streamed: false });
    expect(await m.latencyCount()).toBe(0);
    expect(await m.finished('302')).toBe(1);
  });

  it('keeps the accepting gateway’s start when the same request is then followed here', async () => {
    const m = setup();
    acceptAndQueue(m.events, 'r1', 1_000);
    m.events.emit('followed', { requestId: 'r1', functionId: F, versionId: V });
    m.events.emit('completed', { requestId: 'r1', at: 1_200 });
    expect(await m.latencySum()).toBeCloseTo(0.2);
  });

  it('labels a streamed answer by the function’s status, and ignores requests it never heard of', async () => {
    const m = setup();
    acceptAndQueue(m.events, 'r1', 1_000);
    m.events.emit('delivered', { requestId: 'r1', status: 422, streamed: true });
    m.events.emit('delivered', { requestId: 'unknown', status: 200, streamed: true });
    expect(await m.finished('422')).toBe(1);
    expect(await m.finished('200')).toBe(0);
  });

  it('remembers at most maxTracked requests, forgetting the oldest first', async () => {
    const m = setup(2);
    acceptAndQueue(m.events, 'r1', 1_000);
    acceptAndQueue(m.events, 'r2', 1_000);
    acceptAndQueue(m.events, 'r3', 1_000);
    for (const requestId of ['r1', 'r2', 'r3']) {
      m.events.emit('delivered', { requestId, status: 200, streamed: false });
    }
    expect(await m.accepted()).toBe(3);
    expect(await m.finished('200')).toBe(2);
  });

  it('counts nothing once unsubscribed', async () => {
    const m = setup();
    m.stop();
    acceptAndQueue(m.events, 'r1', 1_000);
    expect(await m.accepted()).toBe(0);
  });
});
