/**
 * `pnpm bench`: requests/s and latency of the product, each figure beside a baseline measured in the same
 * run, on one private redis-server. Four sections (BENCH_SECTIONS, default all):
 *   pexec   inproc / pexec / grpc-invoke / bullmq-floor: the invocation path through gateway, Redis and
 *           worker, over HTTP pexec and the gateway's gRPC port (pexec-section.ts);
 *   kserve  the worker's KServe V2 HTTP JSON, HTTP binary and gRPC infer beside a bare Hono echo of the
 *           same sizes (kserve-section.ts);
 *   stream  SSE streaming of the `generative` function: time to first event and per-event overhead beside an
 *           in-process greedy decode loop of the same model (stream-section.ts);
 *   compute `densenet_onnx` over the worker's KServe HTTP binary: dynamic batching on vs off, 2 model instances
 *           vs 1 (compute-section.ts).
 * Prints a table per section and writes bench/results/<timestamp>.json and bench/results/latest.json.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { startRedis } from '@nvcf/testing';
import { Redis } from 'ioredis';
import { loadBenchConfig } from './bench-config.ts';
import { runComputeSection } from './compute-section.ts';
import { formatComputeSection } from './compute-tables.ts';
import { formatKserveTable, formatServerTable, formatSizes } from './kserve-report.ts';
import { runKserveSection } from './kserve-section.ts';
import { runCleanups } from './load-driver.ts';
import { machineInfo } from './machine-info.ts';
import { payloadFor } from './payloads.ts';
import { NOOP_WORKER_CONCURRENCY, PEXEC_WORKER_CONCURRENCY, runPexecSection } from './pexec-section.ts';
import {
  type BenchReport,
  contentionWarning,
  formatCpuTable,
  formatRedisCostLines,
  formatTable,
  writeReport,
} from './report.ts';
import { formatStreamTable, runStreamSection } from './stream-section.ts';

const config = loadBenchConfig();
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
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
  const pids: Record<string, number> = Number.isFinite(redisPid) ? { redis: redisPid } : {};

  const modelRepository = await mkdtemp(join(tmpdir(), 'nvcf-bench-models-'));
  cleanups.push(() => rm(modelRepository, { recursive: true, force: true }));
  await generateExampleRepository(modelRepository, { includeGenerative: true });
  const payloads = config.models.map(payloadFor);
  const section = { config, redisUrl: redis.url, modelRepository, payloads, pids, log };

  // One section after the other: the pexec stack is closed before the kserve worker starts.
  const pexec = config.sections.includes('pexec') ? await runPexecSection(section) : { runs: [], comparisons: [] };
  const kserve = config.sections.includes('kserve') ? await runKserveSection(section) : undefined;
  const stream = config.sections.includes('stream') ? await runStreamSection(section) : undefined;
  const compute = config.sections.includes('compute') ? await runComputeSection(section) : undefined;

  const report: BenchReport = {
    timestamp: new Date().toISOString(),
    machine: await machineInfo(redisVersion),
    config: {
      ...config,
      workerConcurrency: PEXEC_WORKER_CONCURRENCY,
      noopWorkerConcurrency: NOOP_WORKER_CONCURRENCY,
      ortThreads: { intraOp: 1, interOp: 1 },
    },
    ...pexec,
    ...(kserve ? { kserve } : {}),
    ...(stream ? { stream } : {}),
    ...(compute ? { compute } : {}),
  };
  const machine = report.machine as { cpuModel: string; cpuCount: number; node: string };
  console.log(`\n${machine.cpuModel} x${machine.cpuCount}, node ${machine.node}, redis ${redisVersion}`);
  if (report.runs.length > 0) {
    console.log(
      `${config.warmupSeconds} s warm-up + ${config.measureSeconds} s window per row; latencies in ms; err = non-200 / failed\n`,
    );
    console.log(formatTable(report));
    const costLines = formatRedisCostLines(report.runs);
    if (costLines) {
      console.log(
        `\nRedis per invocation during each window (INFO commandstats/stats/cpu before and after; commands that ` +
          `scripts run counted with them; payload = the request body as the path sends it, JSON for pexec and the ` +
          `protobuf ModelInferRequest for grpc-invoke, and answer likewise):\n${costLines}`,
      );
    }
    const cpuTable = formatCpuTable(report.runs);
    if (cpuTable) console.log(`\nCPU during each window, % of one core:\n${cpuTable}`);
    const warning = contentionWarning(report.runs);
    if (warning) console.log(warning);
  }
  if (kserve) {
    console.log(
      `\nWorker KServe V2 infer vs a bare Hono echo of the same bytes (floor), ${config.warmupSeconds} s warm-up + ` +
        `${config.kserveMeasureSeconds} s window per row; latencies in ms; /floor = worker ÷ floor\n`,
    );
    console.log(formatKserveTable(kserve));
    console.log(`\n${formatSizes(kserve.sizes)}`);
    const t = kserve.target;
    const verdict = t.met === null ? 'not measured' : t.met ? 'met' : 'MISSED';
    console.log(`target: ${t.what} = ${t.ratio?.toFixed(2) ?? '-'}× (limit ≤ ${t.limit.toFixed(1)}×): ${verdict}`);
    console.log(`\nWorker's own time per request (statistics extension), µs:\n${formatServerTable(kserve)}`);
    const cpuTable = formatCpuTable(kserve.runs);
    if (cpuTable) console.log(`\nCPU during each kserve window, % of one core:\n${cpuTable}`);
    const warning = contentionWarning(kserve.runs);
    if (warning) console.log(warning);
  }
  if (stream) {
    console.log(
      `\nSSE streaming of '${stream.model}' (${stream.tokens} tokens, ${stream.stream.runs} sequential runs after ` +
        `${stream.warmupRuns} warm-up) vs the same greedy loop in-process; ms; ttfe = time to first event, ` +
        `per-event = (t(N-th) − t(first)) / (N − 1)\n`,
    );
    console.log(formatStreamTable(stream));
  }
  if (compute) console.log(`\n${formatComputeSection(compute)}`);
  const paths = await writeReport(join(import.meta.dirname, '../results'), report);
  console.log(`\nwrote ${paths.join(', ')}`);
} finally {
  await runCleanups(cleanups, log);
}
