/**
 * `pnpm bench`: requests/s and latency of the invocation path against two baselines measured in the same
 * run, on one private redis-server:
 *   inproc        LoadedModel.run in this process (inference alone),
 *   pexec         HTTP pexec → gateway process → Redis → one worker process → result (the product),
 *   bullmq-floor  a bare BullMQ add → no-op Worker process → QueueEvents completion (the queue alone).
 * Prints a table and writes bench/results/<timestamp>.json and bench/results/latest.json.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { startRedis } from '@nvcf/testing';
import { Redis } from 'ioredis';
import { loadBenchConfig } from './bench-config.ts';
import { startBullmqFloor } from './bullmq-floor.ts';
import { createCpuProbe } from './cpu-probe.ts';
import { inprocCall, loadInprocModels } from './inproc-target.ts';
import type { Call } from './load-driver.ts';
import { runLoad } from './load-driver.ts';
import { machineInfo } from './machine-info.ts';
import { payloadFor } from './payloads.ts';
import { checkPexecAnswer, pexecCall, startProductStack } from './product-stack.ts';
import {
  type BenchReport,
  compare,
  formatCpuTable,
  formatTable,
  MODES,
  type Mode,
  type RunRecord,
  writeReport,
} from './report.ts';

const config = loadBenchConfig();
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const maxConcurrency = Math.max(...config.concurrencies);
const cleanups: (() => Promise<void> | void)[] = [];

try {
  // Always a private server: the figures must not depend on (or disturb) whatever REDIS_URL points at.
  const redis = await startRedis({ env: {} });
  cleanups.push(() => redis.close());
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 3 });
  cleanups.push(() => admin.disconnect());
  const info = await admin.info('server');
  const redisPid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  const redisVersion = /redis_version:(\S+)/.exec(info)?.[1];

  const modelRepository = await mkdtemp(join(tmpdir(), 'nvcf-bench-models-'));
  cleanups.push(() => rm(modelRepository, { recursive: true, force: true }));
  await generateExampleRepository(modelRepository);
  const payloads = config.models.map(payloadFor);

  log(`starting: redis ${redis.url}, gateway + worker + noop-worker children`);
  const inproc = await loadInprocModels(modelRepository, config.models);
  cleanups.push(() => inproc.close());
  const stack = await startProductStack({
    redisUrl: redis.url,
    keyPrefix: `bench${Math.random().toString(36).slice(2, 8)}`,
    modelRepository,
    models: config.models,
    logLevel: config.childLogLevel,
    workerConcurrency: 32,
    maxSockets: maxConcurrency,
  });
  cleanups.push(() => stack.close());
  const floor = await startBullmqFloor({ redisUrl: redis.url, concurrency: 32, maxInFlight: maxConcurrency });
  cleanups.push(() => floor.close());
  for (const p of payloads) await checkPexecAnswer(stack.client, p, config.pollSeconds);

  const cpu = createCpuProbe({
    bench: process.pid,
    gateway: stack.gateway.pid,
    worker: stack.worker.pid,
    'noop-worker': floor.worker.pid,
    ...(Number.isFinite(redisPid) ? { redis: redisPid } : {}),
  });
  const calls = (p: (typeof payloads)[number]): Record<Mode, Call> => ({
    inproc: inprocCall(inproc.model(p.model), p),
    pexec: pexecCall(stack.client, p, config.pollSeconds),
    'bullmq-floor': floor.call(p),
  });

  const runs: RunRecord[] = [];
  for (const payload of payloads) {
    const call = calls(payload);
    for (const concurrency of config.concurrencies) {
      for (const mode of MODES) {
        let cpuPercent: Record<string, number> = {};
        // A child that died mid-run turns into an error here rather than a table of timeouts.
        const result = await Promise.race([
          runLoad(call[mode], {
            concurrency,
            warmupMs: config.warmupSeconds * 1000,
            measureMs: config.measureSeconds * 1000,
            onWindowStart: () => cpu.start(),
            onWindowEnd: () => {
              cpuPercent = cpu.stop();
            },
          }),
          stack.gateway.died,
          stack.worker.died,
          floor.worker.died,
        ]);
        runs.push({ model: payload.model, mode, ...result, cpuPercent });
        const errs = result.errors ? `, ${result.errors} errors ${JSON.stringify(result.errorKinds)}` : '';
        log(
          `${payload.model} c=${concurrency} ${mode}: ${result.rps.toFixed(0)} rps, p50 ${result.p50Ms.toFixed(3)} ms, p99 ${result.p99Ms.toFixed(3)} ms${errs}`,
        );
        await new Promise((r) => setTimeout(r, 250)); // let the previous run's tail settle
      }
    }
  }

  const report: BenchReport = {
    timestamp: new Date().toISOString(),
    machine: await machineInfo(redisVersion),
    config: { ...config, workerConcurrency: 32, noopWorkerConcurrency: 32, ortThreads: { intraOp: 1, interOp: 1 } },
    runs,
    comparisons: compare(runs),
  };
  const machine = report.machine as { cpuModel: string; cpuCount: number; node: string };
  console.log(`\n${machine.cpuModel} x${machine.cpuCount}, node ${machine.node}, redis ${redisVersion}`);
  console.log(
    `${config.warmupSeconds} s warm-up + ${config.measureSeconds} s window per row; latencies in ms; err = non-200 / failed\n`,
  );
  console.log(formatTable(report));
  const cpuTable = formatCpuTable(report);
  if (cpuTable) console.log(`\nCPU during each window, % of one core:\n${cpuTable}`);
  const paths = await writeReport(join(import.meta.dirname, '../results'), report);
  console.log(`\nwrote ${paths.join(', ')}`);
} finally {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (err) {
      log(`cleanup failed: ${(err as Error).message}`);
    }
  }
}
