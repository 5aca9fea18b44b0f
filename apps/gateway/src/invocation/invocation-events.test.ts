import { successResult } from '@nvcf/queue';
import { describe, expect, it } from 'vitest';
import { answerStatus, createInvocationEvents, type InvocationEventName } from './invocation-events.ts';

describe('invocation events', () => {
  it('a listener that throws is reported and the others still hear the event', () => {
    const errors: [unknown, InvocationEventName][] = [];
    const events = createInvocationEvents((err, name) => errors.push([err, name]));
    const heard: string[] = [];
    events.on('queued', () => {
      throw new Error('broken observer');
    });
    const stop = events.on('queued', (e) => heard.push(e.requestId));
    events.emit('queued', { requestId: 'r1', functionId: 'f', versionId: 'v' });
    stop();
    events.emit('queued', { requestId: 'r2', functionId: 'f', versionId: 'v' });
    expect(heard).toEqual(['r1']);
    expect(errors.map(([err, name]) => [(err as Error).message, name])).toEqual([
      ['broken observer', 'queued'],
      ['broken observer', 'queued'],
    ]);
  });

  it('a stored large result is answered as a 302, anything else with its own status', () => {
    const result = successResult({ contentType: 'application/json', body: Buffer.from('{}') });
    expect(answerStatus(result)).toBe(200);
    expect(answerStatus({ ...result, objectKey: 'results/r1' })).toBe(302);
  });
});
