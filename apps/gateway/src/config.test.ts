import { describe, expect, it } from 'vitest';
import { loadGatewayConfig } from './config.ts';

describe('gateway config', () => {
  it('has working defaults', () => {
    const c = loadGatewayConfig({});
    expect(c).toMatchObject({
      port: 8080,
      metricsPort: 8082,
      maxRequestBodyBytes: 5 * 1024 * 1024,
      defaultPollSeconds: 60,
      requestTtlSeconds: 3600,
      console: true,
    });
  });

  it('turns the web console off with GATEWAY_CONSOLE=false', () => {
    expect(loadGatewayConfig({ GATEWAY_CONSOLE: 'false' }).console).toBe(false);
    expect(() => loadGatewayConfig({ GATEWAY_CONSOLE: 'maybe' })).toThrow(/GATEWAY_CONSOLE/);
  });

  it('lists every problem at once', () => {
    let message = '';
    try {
      loadGatewayConfig({ GATEWAY_PORT: 'x', DEFAULT_POLL_SECONDS: '4000', LOG_LEVEL: 'loud' });
    } catch (err) {
      message = (err as Error).message;
    }
    for (const name of ['GATEWAY_PORT', 'DEFAULT_POLL_SECONDS', 'LOG_LEVEL']) expect(message).toContain(name);
  });

  it('leaves tracing off unless an OTLP endpoint is set, and checks it is a URL', () => {
    expect(loadGatewayConfig({}).tracing).toEqual({ endpoint: '', serviceName: 'nvcf-gateway', scheduleDelayMs: 5000 });
    const on = loadGatewayConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'edge',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    expect(on.tracing).toEqual({ endpoint: 'http://collector:4318', serviceName: 'edge', scheduleDelayMs: 100 });
    expect(() => loadGatewayConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });

  it('reads the secrets key as base64 or hex, and says how to make one when it is neither', () => {
    expect(loadGatewayConfig({}).secrets).toEqual({});
    const key = Buffer.alloc(32, 7);
    expect(loadGatewayConfig({ NVCF_SECRETS_KEY: key.toString('base64') }).secrets).toEqual({ key });
    expect(loadGatewayConfig({ NVCF_SECRETS_KEY: key.toString('hex') }).secrets).toEqual({ key });
    expect(() => loadGatewayConfig({ NVCF_SECRETS_KEY: 'short' })).toThrow(/NVCF_SECRETS_KEY: .*openssl rand/);
    expect(() => loadGatewayConfig({ NVCF_SECRETS_PREVIOUS_KEY: key.toString('hex') })).toThrow(
      /NVCF_SECRETS_PREVIOUS_KEY: needs NVCF_SECRETS_KEY/,
    );
  });
});
