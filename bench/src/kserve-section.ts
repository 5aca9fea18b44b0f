import type { BenchConfig } from './bench-config.ts';
import { createCpuProbe } from './cpu-probe.ts';
import { startEchoFloor } from './echo-floor.ts';
import {
  compareKserve,
  KSERVE_MODES,
  type KserveMode,
  type KserveReport,
  type KserveRunRecord,
  kserveTarget,
  type WireSizes,
} from './kserve-report.ts';
import { kserveRequests } from './kserve-requests.ts';
import { type ServerTimings, type StatsSnapshot, serverTimings, startKserveStack } from './kserve-stack.ts';
import { type Call, runCleanups, runLoad } from './load-driver.ts';
import type { Payload } from './payloads.ts';

const WORKER_CONCURRENCY = 32;

export interface KserveSectionOptions {
  config: BenchConfig;
  redisUrl: string;
  modelRepository: string;
  payloads: Payload[];
  /** Extra processes for the CPU probe (redis). */
  pids: Record<string, number>;
  log(msg: string): void;
}

/**
 * The worker's KServe V2 surfaces called directly, (a) HTTP JSON, (b) HTTP binary, (c) gRPC, each beside
 * (d) a bare Hono echo answering a body of the same size: what the worker adds to HTTP itself.
 * A worker process of its own (the pexec section's stack is closed by then), on the bench's Redis.
 */
export async function runKserveSection(opts: KserveSectionOptions): Promise<KserveReport> {
  const { config, log } = opts;
  const maxSockets = Math.max(...config.kserveConcurrencies);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    log('kserve section: starting worker + echo children');
    const stack = await startKserveStack({
      redisUrl: opts.redisUrl,
      keyPrefix: `benchk${Math.random().toString(36).slice(2, 8)}`,
      modelRepository: opts.modelRepository,
      logLevel: config.childLogLevel,
      workerConcurrency: WORKER_CONCURRENCY,
      maxSockets,
    });
    cleanups.push(() => stack.close());
    const echo = await startEchoFloor({ maxSockets });
    cleanups.push(() => echo.close());

    const sizes: Record<string, WireSizes> = {};
    const targets: { payload: Payload; calls: Record<KserveMode, Call> }[] = [];
    for (const payload of opts.payloads) {
      const requests = kserveRequests(payload);
      const res = await stack.check(payload, requests);
      sizes[payload.model] = {
        json: { request: requests.json.body.length, response: res.json },
        binary: { request: requests.binary.body.length, response: res.binary },
      };
      const calls: Record<KserveMode, Call> = {
        'http-json': stack.httpCall(requests.path, requests.json),
        'http-binary': stack.httpCall(requests.path, requests.binary),
        grpc: stack.grpcCall(requests.grpc),
        'echo-json': echo.call(requests.json, res.json),
        'echo-binary': echo.call(requests.binary, res.binary),
      };
      await calls['echo-json']();
      await calls['echo-binary']();
      targets.push({ payload, calls });
    }

    const cpu = createCpuProbe({ bench: process.pid, worker: stack.worker.pid, echo: echo.server.pid, ...opts.pids });
    const runs: KserveRunRecord[] = [];
    for (const { payload, calls } of targets) {
      for (const concurrency of config.kserveConcurrencies) {
        for (const mode of KSERVE_MODES) {
          const onWorker = !mode.startsWith('echo');
          let cpuPercent: Record<string, number> = {};
          let statsBefore: Promise<StatsSnapshot> | undefined;
          let statsAfter: Promise<StatsSnapshot> | undefined;
          // Sampled when the window opens and closes; one small GET each, beside the load.
          const snapshot = () => {
            const p = stack.stats(payload.model);
            p.catch(() => {});
            return p;
          };
          const result = await Promise.race([
            runLoad(calls[mode], {
              concurrency,
              warmupMs: config.warmupSeconds * 1000,
              measureMs: config.kserveMeasureSeconds * 1000,
              onWindowStart: () => {
                if (onWorker) statsBefore = snapshot();
                cpu.start();
              },
              onWindowEnd: () => {
                cpuPercent = cpu.stop();
                if (onWorker) statsAfter = snapshot();
              },
            }),
            stack.worker.died,
            echo.server.died,
          ]);
          let server: ServerTimings | undefined;
          if (statsBefore && statsAfter) server = serverTimings(await statsBefore, await statsAfter);
          runs.push({ model: payload.model, mode, ...result, cpuPercent, ...(server ? { server } : {}) });
          const errs = result.errors ? `, ${result.errors} errors ${JSON.stringify(result.errorKinds)}` : '';
          log(
            `${payload.model} c=${concurrency} ${mode}: ${result.rps.toFixed(0)} rps, p50 ${result.p50Ms.toFixed(3)} ms, p99 ${result.p99Ms.toFixed(3)} ms${errs}`,
          );
          await new Promise((r) => setTimeout(r, 250)); // let the previous run's tail settle
        }
      }
    }
    const comparisons = compareKserve(runs);
    return {
      config: {
        concurrencies: config.kserveConcurrencies,
        warmupSeconds: config.warmupSeconds,
        measureSeconds: config.kserveMeasureSeconds,
        workerConcurrency: WORKER_CONCURRENCY,
      },
      sizes,
      runs,
      comparisons,
      target: kserveTarget(comparisons),
    };
  } finally {
    await runCleanups(cleanups, log);
  }
}
