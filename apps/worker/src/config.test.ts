import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from './config.ts';

describe('worker config', () => {
  it('defaults to cuda then cpu, one ORT thread each, and a 30 s drain', () => {
    const c = loadWorkerConfig({});
    expect(c.executionProviders).toEqual(['cuda', 'cpu']);
    expect(c).toMatchObject({ intraOpThreads: 1, interOpThreads: 1, shutdownTimeoutMs: 30_000, concurrency: 4 });
    expect(c.workerId).toMatch(/^worker-/);
  });

  it('parses provider lists and refuses bad numbers', () => {
    expect(loadWorkerConfig({ ORT_EXECUTION_PROVIDERS: ' CPU ' }).executionProviders).toEqual(['cpu']);
    expect(() => loadWorkerConfig({ WORKER_CONCURRENCY: '0', HEARTBEAT_INTERVAL_MS: 'soon' })).toThrow(
      /WORKER_CONCURRENCY[\s\S]*HEARTBEAT_INTERVAL_MS/,
    );
  });
});
