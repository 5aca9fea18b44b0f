import { describe, expect, it } from 'vitest';
import { loadScaleConfig, parseShapes } from './scale-config.ts';

describe('loadScaleConfig', () => {
  it('defaults to 1, 2 and 4 workers behind one gateway, then two gateways, on densenet_onnx', () => {
    const c = loadScaleConfig({});
    expect(c.rows).toEqual([
      { gateways: 1, workers: 1 },
      { gateways: 1, workers: 2 },
      { gateways: 1, workers: 4 },
      { gateways: 2, workers: 2 },
      { gateways: 2, workers: 4 },
    ]);
    expect(c).toMatchObject({ model: 'densenet_onnx', concurrency: 16, costModels: ['simple'], redisBenchmark: true });
  });

  it('reads every knob from the environment and refuses what it cannot use', () => {
    const c = loadScaleConfig({
      BENCH_SCALE_ROWS: '1x1, 3x2',
      BENCH_SCALE_CONCURRENCY: '32',
      BENCH_SCALE_COST_MODELS: '',
      BENCH_SCALE_REDIS_BENCHMARK: '0',
      BENCH_SCALE_MONITOR_INVOCATIONS: '0',
    });
    expect(c.rows).toEqual([
      { gateways: 1, workers: 1 },
      { gateways: 3, workers: 2 },
    ]);
    expect(c).toMatchObject({ concurrency: 32, costModels: [], redisBenchmark: false, monitorInvocations: 0 });
    expect(() => parseShapes('1x0')).toThrow(/1x0/);
    expect(() => parseShapes('two')).toThrow(/two/);
    expect(() => parseShapes(' , ')).toThrow(/no shape/);
    expect(() => loadScaleConfig({ BENCH_SCALE_CONCURRENCY: '0' })).toThrow(/BENCH_SCALE_CONCURRENCY/);
    expect(() => loadScaleConfig({ BENCH_SCALE_REDIS_BENCHMARK: 'yes' })).toThrow(/BENCH_SCALE_REDIS_BENCHMARK/);
  });
});
