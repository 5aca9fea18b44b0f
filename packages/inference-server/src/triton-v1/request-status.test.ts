import { AppError } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { createRequestStatuses, v1HttpStatus } from './request-status.ts';

describe('RequestStatus', () => {
  it('numbers answers and carries the v1 code of an error', () => {
    const statuses = createRequestStatuses('inference:0');
    expect(statuses.of()).toEqual({ code: 'SUCCESS', server_id: 'inference:0', request_id: 1 });
    expect(statuses.of(new AppError('INVALID_ARGUMENT', 'bad'))).toEqual({
      code: 'INVALID_ARG',
      msg: 'bad',
      server_id: 'inference:0',
      request_id: 2,
    });
    expect(statuses.of(new AppError('UNIMPLEMENTED', 'x')).code).toBe('UNSUPPORTED');
    expect(statuses.of(new AppError('RESOURCE_EXHAUSTED', 'x')).code).toBe('UNAVAILABLE');
    expect(statuses.of(new Error('secret detail'))).toMatchObject({ code: 'INTERNAL', msg: 'internal error' });
  });

  it('maps SUCCESS to 200 and every other code to 400', () => {
    expect(v1HttpStatus('SUCCESS')).toBe(200);
    for (const code of ['NOT_FOUND', 'UNAVAILABLE', 'INTERNAL', 'UNSUPPORTED', 'UNKNOWN'] as const) {
      expect(v1HttpStatus(code)).toBe(400);
    }
  });
});
