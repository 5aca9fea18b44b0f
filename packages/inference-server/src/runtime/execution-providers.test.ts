import { describe, expect, it } from 'vitest';
import { ortProviderName, parseExecutionProviders } from './execution-providers.ts';

describe('parseExecutionProviders', () => {
  it('keeps the order and normalises case and spaces', () => {
    expect(parseExecutionProviders([' CUDA', 'cpu'])).toEqual(['cuda', 'cpu']);
  });

  it('accepts every provider onnxruntime-node knows by name', () => {
    const all = ['cpu', 'cuda', 'tensorrt', 'webgpu', 'dml', 'coreml'];
    expect(parseExecutionProviders(all).map(ortProviderName)).toEqual(all);
  });

  it.each([
    [['gpu'], "unknown execution provider 'gpu' (supported: cpu, cuda, tensorrt, webgpu, dml, coreml)"],
    [[], 'at least one provider'],
    [['cpu', 'CPU'], "'cpu' is listed twice"],
  ])('rejects %j', (names, message) => {
    expect(() => parseExecutionProviders(names)).toThrow(message);
  });
});
