import { describe, expect, it } from 'vitest';
import { AppError, ErrorCode } from '../errors.ts';
import {
  TRITON_STATUS,
  tritonErrorOf,
  tritonGrpcStatus,
  tritonHttpStatus,
  unknownModelError,
  unknownModelMessage,
  versionNotReadyError,
  versionNotReadyMessage,
} from './triton-status.ts';

describe('Triton status mapping', () => {
  it("follows Triton's error-code to HTTP status table", () => {
    expect(tritonHttpStatus('INVALID_ARGUMENT')).toBe(400);
    expect(tritonHttpStatus('ALREADY_EXISTS')).toBe(400);
    expect(tritonHttpStatus('CANCELLED')).toBe(400);
    expect(tritonHttpStatus('NOT_FOUND')).toBe(404);
    expect(tritonHttpStatus('INTERNAL')).toBe(500);
    expect(tritonHttpStatus('UNIMPLEMENTED')).toBe(501);
    expect(tritonHttpStatus('UNAVAILABLE')).toBe(503);
    expect(tritonHttpStatus('RESOURCE_EXHAUSTED')).toBe(503);
    expect(tritonHttpStatus('PAYLOAD_TOO_LARGE')).toBe(400);
    expect(
      (
        [
          'INVALID_ARGUMENT',
          'ALREADY_EXISTS',
          'CANCELLED',
          'NOT_FOUND',
          'INTERNAL',
          'UNIMPLEMENTED',
          'UNAVAILABLE',
        ] as const
      ).map(tritonGrpcStatus),
    ).toEqual([3, 6, 1, 5, 13, 12, 14]);
    expect(tritonGrpcStatus('RESOURCE_EXHAUSTED')).toBe(14);
  });

  it('maps every error code to a status Triton clients understand', () => {
    for (const code of Object.values(ErrorCode)) {
      const { http, grpc } = TRITON_STATUS[code];
      expect(http).toBeGreaterThanOrEqual(400);
      expect(grpc).toBeGreaterThan(0);
      expect(grpc).toBeLessThanOrEqual(16);
    }
  });

  it('turns anything thrown into a status and a message', () => {
    expect(tritonErrorOf(new AppError('UNAVAILABLE', 'Exceeds maximum queue size'))).toEqual({
      code: 'UNAVAILABLE',
      message: 'Exceeds maximum queue size',
      http: 503,
      grpc: 14,
    });
    expect(tritonErrorOf(new Error('boom'))).toEqual({ code: 'INTERNAL', message: 'boom', http: 500, grpc: 13 });
    expect(tritonErrorOf('text')).toMatchObject({ code: 'INTERNAL', message: 'text' });
  });

  it("writes Triton's fixed texts", () => {
    expect(unknownModelMessage('resnet')).toBe("Request for unknown model: 'resnet' is not found");
    expect(versionNotReadyMessage('simple', 2)).toBe(
      "Request for unknown model: 'simple' version 2 is not at ready state",
    );
    expect(unknownModelError('m')).toMatchObject({ code: 'INVALID_ARGUMENT', message: unknownModelMessage('m') });
    const notReady = versionNotReadyError('m', '3');
    expect(notReady.code).toBe('UNAVAILABLE');
    expect(tritonErrorOf(notReady).http).toBe(503);
  });
});
