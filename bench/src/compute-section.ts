import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchConfig } from './bench-config.ts';
import { checkVariant, densenetRequest } from './compute-check.ts';
import {
  COMPUTE_SOURCE_MODEL,
  type ComputeVariant,
  computeVariants,
  writeComputeRepository,
} from './compute-models.ts';
import { type ComputeReport, type ComputeRunRecord, compareCompute } from './compute-report.ts';
import { type BatchCounts, batchCounts, executedBetween } from './compute-stats.ts';
import { createThreadProbe, type ThreadRole } from './compute-thread-probe.ts';
import { createCpuProbe } from './cpu-probe.ts';
import { createHttpClient } from './http-client.ts';
import { startKserveStack } from './kserve-stack.ts';
import { runCleanups, runLoad } from './load-driver.ts';

/** Throughput ratios the project aims for: (a) batching on ÷ off, (b) 2 instances ÷ 1 (on 2 cores). */
const BATCHING_TARGET = 3;
const INSTANCES_TARGET = 1.7;

export interface ComputeSectionOptions {
  config: BenchConfig;
  redisUrl: string;
  /** Extra processes for the CPU probe (redis). */
  pids: Record<string, number>;
  log(msg: string): void;
}

/**
 * Compute inside the worker on `densenet_onnx`, requests of batch 1 over KServe HTTP binary, one worker
 * process over a repository of the section's own holding four copies of the model:
 *   (a) dynamic batching on vs off, 1 instance each, many requests in flight (the batcher has a queue to join);
 *   (b) 2 instances vs 1, no batching, enough in flight to keep both busy.
 * Each row also reports, from the worker's statistics, the average batch the model actually executed.
 */
export async function runComputeSection(opts: ComputeSectionOptions): Promise<ComputeReport> {
  const { config, log } = opts;
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    const repository = await mkdtemp(join(tmpdir(), 'nvcf-bench-compute-'));
    cleanups.push(() => rm(repository, { recursive: true, force: true }));
    const variants = computeVariants(config.computeQueueDelayUs);
    const maxBatchSize = await writeComputeRepository(repository, Object.values(variants));

    const names = Object.values(variants).map((v) => v.name);
    log(`compute section: starting a worker over ${names.join(', ')}`);
    const stack = await startKserveStack({
      redisUrl: opts.redisUrl,
      keyPrefix: `benchc${Math.random().toString(36).slice(2, 8)}`,
      modelRepository: repository,
      logLevel: config.childLogLevel,
      // The queue consumer idles here: every request arrives over KServe HTTP.
      workerConcurrency: 1,
      maxSockets: Math.max(config.computeBatchingConcurrency, config.computeInstancesConcurrency),
    });
    cleanups.push(() => stack.close());
    // Checks and statistics on connections of their own, so they never wait behind the load's sockets.
    const control = createHttpClient(`http://127.0.0.1:${stack.httpPort}`, 2);
    cleanups.push(() => control.close());

    const request = densenetRequest();
    let reference: Float32Array | undefined;
    for (const v of Object.values(variants)) reference = await checkVariant(control, v, request, reference);

    const cpu = createCpuProbe({ bench: process.pid, worker: stack.worker.pid, ...opts.pids });
    const threads = createThreadProbe(stack.worker.pid);
    const measure = async (v: ComputeVariant, mode: string, concurrency: number): Promise<ComputeRunRecord> => {
      let cpuPercent: Record<string, number> = {};
      let workerThreads: Record<ThreadRole, number> = { main: 0, ort: 0, gc: 0, other: 0 };
      let before: Promise<BatchCounts> | undefined;
      let after: Promise<BatchCounts> | undefined;
      const snapshot = () => {
        const p = batchCounts(control, v.name);
        p.catch(() => {});
        return p;
      };
      const result = await Promise.race([
        runLoad(stack.httpCall(`/v2/models/${v.name}/infer`, request), {
          concurrency,
          warmupMs: config.warmupSeconds * 1000,
          measureMs: config.computeMeasureSeconds * 1000,
          onWindowStart: () => {
            before = snapshot();
            cpu.start();
            threads.start();
          },
          onWindowEnd: () => {
            cpuPercent = cpu.stop();
            workerThreads = threads.stop();
            after = snapshot();
          },
        }),
        stack.worker.died,
      ]);
      if (!before || !after) throw new Error(`${v.name}: statistics not sampled around the window`);
      const executed = executedBetween(await before, await after, result.windowMs);
      const errs = result.errors ? `, ${result.errors} errors ${JSON.stringify(result.errorKinds)}` : '';
      log(
        `${v.name} c=${concurrency}: ${result.rps.toFixed(1)} rps, p50 ${result.p50Ms.toFixed(1)} ms, ` +
          `p99 ${result.p99Ms.toFixed(1)} ms, avg batch ${executed.averageBatch.toFixed(2)}, ` +
          `run ${executed.inferUsPerRow.toFixed(0)} µs/row${errs}`,
      );
      await new Promise((r) => setTimeout(r, 250)); // let the previous run's tail settle
      return { model: v.name, mode, ...result, cpuPercent, workerThreads, executed };
    };

    // Each baseline right before its candidate, so drift between the two stays small.
    const plain = await measure(variants.plain, 'batching off', config.computeBatchingConcurrency);
    const batched = await measure(variants.batched, 'batching on', config.computeBatchingConcurrency);
    const one = await measure(variants.one, '1 instance', config.computeInstancesConcurrency);
    const two = await measure(variants.two, '2 instances', config.computeInstancesConcurrency);

    return {
      model: COMPUTE_SOURCE_MODEL,
      cores: availableParallelism(),
      config: {
        warmupSeconds: config.warmupSeconds,
        measureSeconds: config.computeMeasureSeconds,
        maxBatchSize,
        queueDelayUs: config.computeQueueDelayUs,
        ortThreads: { intraOp: 1, interOp: 1 },
        variants: Object.values(variants).map((v) => ({
          name: v.name,
          instances: v.instances,
          dynamicBatching: v.queueDelayUs !== undefined,
        })),
      },
      runs: [plain, batched, one, two],
      comparisons: [
        compareCompute('dynamic-batching', 'batching on vs off', batched, plain, BATCHING_TARGET),
        compareCompute('instances', '2 instances vs 1', two, one, INSTANCES_TARGET),
      ],
    };
  } finally {
    await runCleanups(cleanups, log);
  }
}
