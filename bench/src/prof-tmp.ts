import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { startRedis } from '@nvcf/testing';
import { createCpuProbe } from './cpu-probe.ts';
import { runLoad } from './load-driver.ts';
import { payloadFor } from './payloads.ts';
import { pexecCall, startProductStack } from './product-stack.ts';

const model = process.env.M ?? 'simple';
const conc = Number(process.env.C ?? 32);
const redis = await startRedis({ env: {} });
const repo = await mkdtemp(join(tmpdir(), 'prof-models-'));
await generateExampleRepository(repo, { includeGenerative: false });
const stack = await startProductStack({
  redisUrl: redis.url,
  keyPrefix: 'prof',
  modelRepository: repo,
  models: [model],
  logLevel: process.env.LL ?? 'info',
  workerConcurrency: 32,
  maxSockets: 64,
  pollSeconds: 30,
});
const p = payloadFor(model);
if (process.env.IDLE) {
  const probe = createCpuProbe({ gateway: stack.gateway.pid, worker: stack.worker.pid });
  await new Promise((r) => setTimeout(r, 3000));
  probe.start();
  await new Promise((r) => setTimeout(r, 5000));
  console.log('idle cpu %', JSON.stringify(probe.stop()));
}
const call = pexecCall(stack.client, p, 30);
const cpu = createCpuProbe({ gateway: stack.gateway.pid, worker: stack.worker.pid, bench: process.pid });
let pct: Record<string, number> = {};
const r = await runLoad(call, {
  concurrency: conc,
  warmupMs: 1000,
  measureMs: Number(process.env.S ?? 6) * 1000,
  onWindowStart: () => cpu.start(),
  onWindowEnd: () => {
    pct = cpu.stop();
  },
});
const us = (k: string) => (((pct[k] ?? 0) / 100 / r.rps) * 1e6).toFixed(0);
console.log(
  model,
  conc,
  r.rps.toFixed(0),
  'rps p50',
  r.p50Ms.toFixed(3),
  'cpu µs/inv gateway',
  us('gateway'),
  'worker',
  us('worker'),
  'bench',
  us('bench'),
  'other%',
  (pct.other ?? 0).toFixed(0),
);
await stack.close();
await redis.close();
