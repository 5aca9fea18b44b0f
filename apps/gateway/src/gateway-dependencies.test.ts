import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const workspace: Record<string, string> = {
  '@nvcf/gateway': 'apps/gateway',
  '@nvcf/models': 'packages/models',
  '@nvcf/protocol': 'packages/protocol',
  '@nvcf/queue': 'packages/queue',
  '@nvcf/service-kit': 'packages/service-kit',
  '@nvcf/storage': 'packages/storage',
  '@nvcf/kserve-grpc': 'packages/kserve-grpc',
  '@nvcf/inference-server': 'packages/inference-server',
  '@nvcf/testing': 'packages/testing',
};

function prodDependencies(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const dir = workspace[name];
  if (!dir) return seen;
  const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  for (const dep of Object.keys(pkg.dependencies ?? {})) prodDependencies(dep, seen);
  return seen;
}

describe("the gateway's production dependencies", () => {
  // The gateway image installs `--prod --filter @nvcf/gateway...`: what is reachable here is what it ships.
  it('do not reach ONNX Runtime (its native binaries stay in the worker image)', () => {
    const deps = prodDependencies('@nvcf/gateway');
    expect(deps.has('@nvcf/models')).toBe(true);
    expect(deps.has('@nvcf/inference-server')).toBe(false);
    expect(deps.has('onnxruntime-node')).toBe(false);
  });
});
