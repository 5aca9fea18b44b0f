/**
 * `pnpm bench:scale`: throughput of pexec on `densenet_onnx` (a model where compute dominates) with 1, 2 and 4
 * worker processes behind one gateway and with two gateways, each row divided by the first (1 gateway × 1 worker)
 * measured in the same run, with CPU per process and Redis cost per invocation; then, on the baseline shape, the
 * Redis cost of a small request (`simple`), who sends the commands (MONITOR), one Redis shard's ops/s
 * (redis-benchmark) and the shards a given invocation rate needs. Prints tables and writes
 * bench/results/scale-<timestamp>.json and bench/results/scale-latest.json. Knobs: scale-config.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { startRedis } from '@nvcf/testing';
import { Redis } from 'ioredis';
import { createCpuProbe } from './cpu-probe.ts';
import { type Call, runCleanups, runMeasuredLoad } from './load-driver.ts';
import { machineInfo } from './machine-info.ts';
import { createRedisCostProbe, formatRedisCost } from './redis-cost.ts';
import { formatMonitorSummary, monitorInvocations } from './redis-monitor.ts';
import { contentionWarning } from './report.ts';
import { loadScaleConfig, type ScaleShape } from './scale-config.ts';
import { runRedisBenchmark } from './scale-redis-benchmark.ts';
import {
  capacityOf,
  compareScale,
  formatScaleReport,
  type ScaleReport,
  type ScaleRow,
  shapeLabel,
  writeScaleReport,
} from './scale-report.ts';
import { checkScaleAnswer, type ScaleRequest, scaleRequest } from './scale-requests.ts';
import { type ScaleStack, startScaleStack } from './scale-stack.ts';

const config = loadScaleConfig();
const log = (msg: string) => process.stderr.write(`[bench:scale] ${msg}\n`);
const cleanups: (() => Promise<void> | void)[] = [];

/** Round-robin over the row's gateways: a closed loop of equal calls splits the load evenly. */
function pexecCall(stack: ScaleStack, r: ScaleRequest): Call {
  let n = 0;
  return async () => {
    const client = stack.clients[n++ % stack.clients.length];
    if (!client) throw new Error('no gateway client');
    const res = await client.request('POST', r.path, r.body, r.headers);
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  };
}

try {
  // A private server: the figures must not depend on (or disturb) whatever REDIS_URL points at.
  const redis = await startRedis({ env: {} });
  cleanups.push(() => redis.close());
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 3 });
  cleanups.push(() => admin.disconnect());
  // The cost probe's own connection: one INFO per read, nothing else on it.
  const costConnection = new Redis(redis.url, { maxRetriesPerRequest: 3 });
  cleanups.push(() => costConnection.disconnect());
  const info = await admin.info('server');
  const redisPid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  const redisVersion = /redis_version:(\S+)/.exec(info)?.[1];

  // The scale model and the cost models only: every other loaded model would add its own idle consumer's commands.
  const modelRepository = await mkdtemp(join(tmpdir(), 'nvcf-bench-scale-'));
  cleanups.push(() => rm(modelRepository, { recursive: true, force: true }));
  await generateExampleRepository(modelRepository, { includeDensenet: true });
  const models = [...new Set([config.model, ...config.costModels])];
  for (const m of ['simple', 'classifier', 'densenet_onnx']) {
    if (!models.includes(m)) await rm(join(modelRepository, m), { recursive: true, force: true });
  }
  const requests = new Map(models.map((m) => [m, scaleRequest(m, config.pollSeconds)]));
  const requestOf = (m: string) => requests.get(m) as ScaleRequest;
  /** Each model's answer body: the cost lines count it as payload beside the request's (redis-cost.ts). */
  const answerBytes = new Map<string, number>();

  const measure = async (
    stack: ScaleStack,
    shape: ScaleShape,
    r: ScaleRequest,
    concurrency: number,
  ): Promise<ScaleRow> => {
    const cpu = createCpuProbe({
      bench: process.pid,
      ...Object.fromEntries([...stack.gateways, ...stack.workers].map((c) => [c.name, c.pid])),
      ...(Number.isFinite(redisPid) ? { redis: redisPid } : {}),
    });
    const cost = createRedisCostProbe(costConnection, r.body.length, answerBytes.get(r.model) ?? 0);
    const result = await Promise.race([
      runMeasuredLoad(
        pexecCall(stack, r),
        { concurrency, warmupMs: config.warmupSeconds * 1000, measureMs: config.measureSeconds * 1000 },
        { cpu, cost },
      ),
      stack.died,
    ]);
    const { cpuPercent } = result;
    // A failed invocation used Redis too: it counts among the invocations the commands are divided by.
    const redisCost = await cost.cost(result.count + result.errors);
    const errs = result.errors ? `, ${result.errors} errors ${JSON.stringify(result.errorKinds)}` : '';
    log(
      `${shapeLabel(shape)} ${r.model} c=${concurrency}: ${result.rps.toFixed(1)} rps, p50 ${result.p50Ms.toFixed(1)} ms, ` +
        `p99 ${result.p99Ms.toFixed(1)} ms${errs}`,
    );
    if (redisCost) log(`  ${formatRedisCost(redisCost)}`);
    await new Promise((res) => setTimeout(res, 250)); // let the window's tail settle
    return { model: r.model, shape, ...result, cpuPercent, ...(redisCost ? { redis: redisCost } : {}) };
  };

  const rows: ScaleRow[] = [];
  const costRows: ScaleRow[] = [];
  const monitor: ScaleReport['monitor'] = [];
  for (const [index, shape] of config.rows.entries()) {
    log(`starting ${shapeLabel(shape)} on ${redis.url}`);
    const stack = await startScaleStack({
      redisUrl: redis.url,
      keyPrefix: `scale${index}${Math.random().toString(36).slice(2, 6)}`,
      modelRepository,
      models,
      gateways: shape.gateways,
      workers: shape.workers,
      logLevel: config.childLogLevel,
      cpuInstances: config.cpuInstances,
      workerConcurrency: config.workerConcurrency,
      maxSockets: Math.max(config.concurrency, config.costConcurrency),
    });
    try {
      for (const client of stack.clients) {
        for (const m of models) answerBytes.set(m, await checkScaleAnswer(client, requestOf(m)));
      }
      rows.push(await measure(stack, shape, requestOf(config.model), config.concurrency));
      if (index > 0) continue;
      for (const m of config.costModels) {
        if (m !== config.model) costRows.push(await measure(stack, shape, requestOf(m), config.costConcurrency));
      }
      for (const m of config.monitorInvocations > 0 ? models : []) {
        const summary = await monitorInvocations(redis.url, pexecCall(stack, requestOf(m)), {
          invocations: config.monitorInvocations,
          concurrency: config.costConcurrency,
        });
        monitor.push({ model: m, concurrency: config.costConcurrency, summary });
        log(`  ${m}: ${formatMonitorSummary(summary, `invocations at ${config.costConcurrency} in flight`)}`);
      }
    } finally {
      await stack.close();
    }
    await new Promise((res) => setTimeout(res, 500));
  }

  const redisBenchmark =
    config.redisBenchmark && Number.isFinite(redisPid) ? await runRedisBenchmark(redis.url, admin, redisPid, log) : [];

  const report: ScaleReport = {
    timestamp: new Date().toISOString(),
    machine: await machineInfo(redisVersion),
    config: { ...config, ortThreads: { intraOp: 1, interOp: 1 } },
    payloadBytes: Object.fromEntries(models.map((m) => [m, requestOf(m).body.length])),
    rows,
    comparisons: compareScale(rows),
    costRows,
    monitor,
    redisBenchmark,
    capacity: capacityOf([...rows, ...costRows]),
  };
  const machine = report.machine as { cpuModel: string; cpuCount: number; node: string };
  console.log(`\n${machine.cpuModel} x${machine.cpuCount}, node ${machine.node}, redis ${redisVersion}`);
  console.log(
    `pexec of '${config.model}' (${(requestOf(config.model).body.length / 1024).toFixed(0)} KB body) at ` +
      `${config.concurrency} in flight, split over each row's gateways`,
  );
  console.log(formatScaleReport(report));
  const warning = contentionWarning(
    [...rows, ...costRows].map((r) => ({
      model: r.model,
      concurrency: r.concurrency,
      mode: `${r.shape.gateways}x${r.shape.workers}`,
      cpuPercent: r.cpuPercent,
    })),
  );
  if (warning) console.log(`\n${warning}`);
  const paths = await writeScaleReport(join(import.meta.dirname, '../results'), report);
  console.log(`\nwrote ${paths.join(', ')}`);
} finally {
  await runCleanups(cleanups, log);
}
