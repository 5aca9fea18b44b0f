import { CreateFunctionRequest } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { containerSpecOf, isoDurationMs } from './container-spec.ts';

const request = (over: Record<string, unknown>) =>
  CreateFunctionRequest.parse({ name: 'echo', inferenceUrl: '/echo', containerImage: 'img', ...over });

describe('containerSpecOf', () => {
  it("reads a container function's server with NVCF's defaults", () => {
    expect(containerSpecOf(request({ containerArgs: 'node server.ts', inferencePort: 9000 }))).toEqual({
      image: 'img',
      args: 'node server.ts',
      environment: [],
      inferencePort: 9000,
      health: { uri: '/v2/health/ready', timeoutMs: 10_000, expectedStatusCode: 200 },
    });
  });

  it('takes the health object over healthUri, with its own port when it differs', () => {
    const health = { protocol: 'HTTP', uri: '/ready', port: 9001, timeout: 'PT1M30S', expectedStatusCode: 204 };
    expect(containerSpecOf(request({ inferencePort: 9000, healthUri: '/ignored', health }))?.health).toEqual({
      uri: '/ready',
      port: 9001,
      timeoutMs: 90_000,
      expectedStatusCode: 204,
    });
  });

  it('is a model function when models name the ONNX model, whatever the image', () => {
    expect(containerSpecOf(request({ models: [{ name: 's', version: '1', uri: 'model-repository://s/1' }] }))).toBe(
      undefined,
    );
    expect(containerSpecOf(request({ containerImage: undefined }))).toBe(undefined);
  });

  it('refuses Helm charts, gRPC health checks and an inferenceUrl that is not a path', () => {
    const grpc = { protocol: 'gRPC', uri: '/h', port: 8001, timeout: 'PT5S', expectedStatusCode: 200 };
    expect(() =>
      containerSpecOf(request({ containerImage: undefined, helmChart: 'c', helmChartServiceName: 's' })),
    ).toThrow(/Helm chart functions are not supported/);
    expect(() => containerSpecOf(request({ health: grpc }))).toThrow(/'health.protocol' gRPC is not supported/);
    expect(() => containerSpecOf(request({ inferenceUrl: 'echo' }))).toThrow(/'inferenceUrl' must be the path/);
  });

  it('refuses an inferenceUrl or health URI that names another host (a tenant aiming the worker elsewhere)', () => {
    for (const path of ['//127.0.0.1:6379/x', '/\\127.0.0.1:6379/x', '/\t/127.0.0.1/x', 'http://169.254.169.254/']) {
      expect(() => containerSpecOf(request({ inferenceUrl: path })), path).toThrow(/'inferenceUrl' must be the path/);
      expect(() => containerSpecOf(request({ healthUri: path })), path).toThrow(/'healthUri' must be a path/);
      const health = { protocol: 'HTTP', uri: path, port: 8000, timeout: 'PT5S', expectedStatusCode: 200 };
      expect(() => containerSpecOf(request({ health })), path).toThrow(/'healthUri' must be a path/);
    }
  });
});

describe('isoDurationMs', () => {
  it.each([
    ['PT10S', 10_000],
    ['PT0.5S', 500],
    ['PT2M', 120_000],
    ['PT1H', 3_600_000],
    ['P1D', 86_400_000],
  ])('%s is %d ms', (text, ms) => {
    expect(isoDurationMs(text)).toBe(ms);
  });
});
