import { totalmem } from 'node:os';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerHostMetrics } from './host-metrics.ts';

const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .map((l) => Number(l.split(' ').at(-1)));

describe('host metrics under Triton names', () => {
  it('reports CPU utilisation as a rate in [0, 1] and the host memory in bytes', async () => {
    const registry = new Registry();
    registerHostMetrics(registry);
    // Utilisation is the change between two scrapes: burn a little CPU between them so there is one.
    await registry.metrics();
    let x = 0;
    for (let i = 0; i < 2_000_000; i++) x += Math.sqrt(i);
    expect(x).toBeGreaterThan(0);
    const text = await registry.metrics();
    const [cpu] = samples(text, 'nv_cpu_utilization');
    expect(cpu).toBeGreaterThanOrEqual(0);
    expect(cpu).toBeLessThanOrEqual(1);
    expect(samples(text, 'nv_cpu_memory_total_bytes')).toEqual([totalmem()]);
    const [used] = samples(text, 'nv_cpu_memory_used_bytes');
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(totalmem());
    expect(text).toContain('# TYPE nv_gpu_utilization gauge');
    // One series per GPU that nvidia-smi lists (none on a host without the NVIDIA driver), each a rate.
    for (const v of samples(text, 'nv_gpu_utilization')) expect(v >= 0 && v <= 1).toBe(true);
  });
});
