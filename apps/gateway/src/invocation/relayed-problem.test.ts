import { errorCodeOfHttpStatus } from '@nvcf/protocol';
import type { InvocationResult } from '@nvcf/queue';
import { describe, expect, it } from 'vitest';
import { relayedProblem } from './relayed-problem.ts';

/** A function's answer with this status, a failure from 400 on (coded as the worker codes a server's status). */
const result = (status: number, contentType: string, body: unknown): InvocationResult => ({
  ...(status < 400 ? { ok: true as const } : { ok: false as const, code: errorCodeOfHttpStatus(status) }),
  status,
  contentType,
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});
const json = (r: { body: Buffer }) => JSON.parse(r.body.toString()) as Record<string, unknown>;

describe('relayedProblem', () => {
  it('fills every NVCF field the function left out, in NVCF order, keeping its own extras', () => {
    const out = relayedProblem(
      result(422, 'application/problem+json', { detail: 'bad prompt', code: 'E1' }),
      '/v2/nvcf/pexec/functions/f',
      'r1',
    );
    expect(Object.keys(json(out))).toEqual(['type', 'title', 'status', 'detail', 'instance', 'requestId', 'code']);
    expect(json(out)).toMatchObject({
      title: 'Unprocessable Content',
      status: 422,
      detail: 'bad prompt',
      instance: '/v2/nvcf/pexec/functions/f',
      requestId: 'r1',
      code: 'E1',
    });
  });

  it('keeps what the function did say', () => {
    const said = { type: 'urn:x', title: 'T', status: 400, detail: 'd', instance: '/own', requestId: 'own' };
    expect(json(relayedProblem(result(400, 'application/problem+json', said), '/p', 'r'))).toEqual(said);
  });

  it('leaves successes, other formats and unparsable bodies as they are', () => {
    for (const r of [
      result(200, 'application/problem+json', { detail: 'x' }),
      result(400, 'application/json', { error: 'kserve style' }),
      result(500, 'application/problem+json', 'not json'),
      result(500, 'application/problem+json', [1, 2]),
    ]) {
      expect(relayedProblem(r, '/p', 'r')).toBe(r);
    }
  });
});
