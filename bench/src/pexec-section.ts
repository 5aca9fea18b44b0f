import { Redis } from 'ioredis';
import type { BenchConfig } from './bench-config.ts';
import { startBullmqFloor } from './bullmq-floor.ts';
import { createCpuProbe } from './cpu-probe.ts';
import { inprocCall, loadInprocModels } from './inproc-target.ts';
import { type Call, runCleanups, runMeasuredLoad } from './load-driver.ts';
import type { Payload } from './payloads.ts';
import { checkPexecAnswer, pexecCall, startProductStack } from './product-stack.ts';
import { createRedisCostProbe, formatRedisCost } from './redis-cost.ts';
import { type Comparison, compare, MODES, type Mode, type RunRecord } from './report.ts';

export const PEXEC_WORKER_CONCURRENCY = 32;
export const NOOP_WORKER_CONCURRENCY = 32;

export interface PexecSectionOptions {
  config: BenchConfig;
  redisUrl: string;
  modelRepository: string;
  payloads: Payload[];
  /** Extra processes for the CPU probe (redis). */
  pids: Record<string, number>;
  log(msg: string): void;
}

/**
 * The invocation path against two baselines measured in the same run:
 *   inproc        LoadedModel.run in this process (inference alone),
 *   pexec         HTTP pexec → gateway process → Redis → one worker process → result (the product),
 *   grpc-invoke   ModelInfer on the gateway's gRPC port (metadata `function-id`), same function, same
 *                 stack, right after pexec: the product's other invocation path,
 *   bullmq-floor  a bare BullMQ add → no-op Worker process → QueueEvents completion (the queue alone).
 */
export async function runPexecSection(
  opts: PexecSectionOptions,
): Promise<{ runs: RunRecord[]; comparisons: Comparison[] }> {
  const { config, payloads, log } = opts;
  const maxConcurrency = Math.max(...config.concurrencies);
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    log(`starting: redis ${opts.redisUrl}, gateway + worker + noop-worker children`);
    const inproc = await loadInprocModels(opts.modelRepository, config.models);
    cleanups.push(() => inproc.close());
    const stack = await startProductStack({
      redisUrl: opts.redisUrl,
      keyPrefix: `bench${Math.random().toString(36).slice(2, 8)}`,
      modelRepository: opts.modelRepository,
      models: config.models,
      logLevel: config.childLogLevel,
      workerConcurrency: PEXEC_WORKER_CONCURRENCY,
      maxSockets: maxConcurrency,
      pollSeconds: config.pollSeconds,
    });
    cleanups.push(() => stack.close());
    await stack.grpc.open(config.concurrencies, 30_000);
    const floor = await startBullmqFloor({
      redisUrl: opts.redisUrl,
      concurrency: NOOP_WORKER_CONCURRENCY,
      maxInFlight: maxConcurrency,
    });
    cleanups.push(() => floor.close());
    // INFO around each window (redis-cost.ts), on a connection of its own.
    const costConnection = new Redis(opts.redisUrl, { maxRetriesPerRequest: 3 });
    cleanups.push(() => costConnection.disconnect());
    /**
     * Each model's request and answer bodies per path (pexec's JSON, gRPC's protobuf): a window counts both as
     * payload, since each must cross Redis once (redis-cost.ts).
     */
    const bodies = new Map<string, Record<'pexec' | 'grpc-invoke', { request: number; answer: number }>>();
    for (const p of payloads) {
      const pexecAnswer = await checkPexecAnswer(stack.client, p, config.pollSeconds);
      const grpc = await stack.grpc.check(p);
      bodies.set(p.model, {
        pexec: { request: p.json.length, answer: pexecAnswer },
        'grpc-invoke': { request: grpc.requestBytes, answer: grpc.answerBytes },
      });
    }

    const cpu = createCpuProbe({
      bench: process.pid,
      gateway: stack.gateway.pid,
      worker: stack.worker.pid,
      'noop-worker': floor.worker.pid,
      ...opts.pids,
    });
    const calls = (p: Payload, concurrency: number): Record<Mode, Call> => ({
      inproc: inprocCall(inproc.model(p.model), p),
      pexec: pexecCall(stack.client, p, config.pollSeconds),
      'grpc-invoke': stack.grpc.call(p, concurrency),
      'bullmq-floor': floor.call(p),
    });

    const runs: RunRecord[] = [];
    for (const payload of payloads) {
      for (const concurrency of config.concurrencies) {
        const call = calls(payload, concurrency);
        for (const mode of MODES) {
          const body = mode === 'pexec' || mode === 'grpc-invoke' ? bodies.get(payload.model)?.[mode] : undefined;
          const cost = createRedisCostProbe(costConnection, body?.request ?? payload.json.length, body?.answer ?? 0);
          // A child that died mid-run turns into an error here rather than a table of timeouts.
          const { cpuPercent, ...result } = await Promise.race([
            runMeasuredLoad(
              call[mode],
              { concurrency, warmupMs: config.warmupSeconds * 1000, measureMs: config.measureSeconds * 1000 },
              { cpu, cost },
            ),
            stack.gateway.died,
            stack.worker.died,
            floor.worker.died,
          ]);
          // inproc touches no Redis: its window would divide the others' background by its invocations.
          const redis = mode === 'inproc' ? undefined : await cost.cost(result.count + result.errors);
          runs.push({ model: payload.model, mode, ...result, cpuPercent, ...(redis ? { redis } : {}) });
          const errs = result.errors ? `, ${result.errors} errors ${JSON.stringify(result.errorKinds)}` : '';
          log(
            `${payload.model} c=${concurrency} ${mode}: ${result.rps.toFixed(0)} rps, p50 ${result.p50Ms.toFixed(3)} ms, p99 ${result.p99Ms.toFixed(3)} ms${errs}`,
          );
          if (redis) log(`  ${formatRedisCost(redis)}`);
          await new Promise((r) => setTimeout(r, 250)); // let the previous run's tail settle
        }
      }
    }
    return { runs, comparisons: compare(runs) };
  } finally {
    await runCleanups(cleanups, log);
  }
}
