import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const MODULE = new URL('./heap-settings.ts', import.meta.url).href;

/**
 * A process that allocates 10,000 short-lived 600 KB Buffers (a tensor-body workload) and prints how many
 * full (mark-compact) collections V8 ran meanwhile: counts, never times, so a fast or slow machine agrees.
 */
const CHILD = `
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { countExternalMemoryInHeapLimit } from ${JSON.stringify(MODULE)};
countExternalMemoryInHeapLimit(process.env.APPLY === '1');
let major = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
}).observe({ entryTypes: ['gc'] });
for (let i = 0; i < 10_000; i++) {
  Buffer.allocUnsafeSlow(600_000).fill(1, 0, 64);
  if (i % 50 === 0) await new Promise((r) => setImmediate(r));
}
await new Promise((r) => setTimeout(r, 50));
console.log(major);
`;

async function fullCollections(apply: boolean): Promise<number> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', CHILD], {
    env: { ...process.env, APPLY: apply ? '1' : '0' },
  });
  return Number(stdout.trim());
}

describe('countExternalMemoryInHeapLimit', () => {
  it('lets short-lived Buffers go in scavenges instead of full collections', async () => {
    const [without, withIt] = await Promise.all([fullCollections(false), fullCollections(true)]);
    // 6 GB through V8's fixed 64 MB allowance forces a full collection every ~100 Buffers (40–60 seen); with
    // the setting 1–6 (V8's memory reducer still runs one now and then, more often on a loaded machine).
    expect(without).toBeGreaterThan(20);
    expect(withIt).toBeLessThan(without / 4);
  });
});
