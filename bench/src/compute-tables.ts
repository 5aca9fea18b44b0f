import type { ComputeReport, ComputeRunRecord } from './compute-report.ts';
import { contentionWarning, fmt, formatCpuTable, ms, renderTable, rps } from './report.ts';

/** Everything the compute section prints: its table, what the rows ran, where the worker's CPU went. */
export function formatComputeSection(report: ComputeReport): string {
  const c = report.config;
  const out = [
    `Compute on '${report.model}' (requests of batch 1, KServe HTTP binary, ORT ${c.ortThreads.intraOp} intra-op ` +
      `thread per instance), ${c.warmupSeconds} s warm-up + ${c.measureSeconds} s window per row; latencies in ms; ` +
      `inf/exec, avg batch and run µs/row (model run wall time per image) from the worker's statistics in the window\n`,
    formatComputeTable(report),
  ];
  const sizes = formatBatchSizes(report);
  if (sizes) out.push(`\n${sizes}`);
  out.push(
    `\nbatching on: dynamic_batching { max_queue_delay_microseconds: ${c.queueDelayUs} }, max_batch_size ` +
      `${c.maxBatchSize}; batching on and off both run 1 KIND_CPU instance, so they have the same compute.\n` +
      `${report.cores} cores here: the instances ratio depends on them (2 instances need 2 cores for compute, ` +
      `beside the worker's event loop, V8's helpers and this client); its target assumes 2 cores, 1 or fewer makes ` +
      `it meaningless.`,
  );
  const cpu = formatCpuTable(report.runs);
  if (cpu) out.push(`\nCPU during each compute window, % of one core:\n${cpu}`);
  out.push(
    `\nThe worker's CPU by thread in each window, % of one core; instance busy: the share of the window its ` +
      `instances were inside a model run (statistics), beside the CPU their threads used:\n${formatThreadTable(report)}`,
  );
  const warning = contentionWarning(report.runs);
  if (warning) out.push(warning);
  return out.join('\n');
}

/** One line per comparison: candidate, baseline, ratios, target. */
function formatComputeTable(report: ComputeReport): string {
  const run = (model: string) => report.runs.find((r) => r.model === model);
  const cells = (r: ComputeRunRecord | undefined) => [
    r?.model ?? '-',
    rps(r?.rps),
    ms(r?.p50Ms),
    ms(r?.p99Ms),
    String(r?.errors ?? '-'),
    r ? `${r.executed.inferences}/${r.executed.executions}` : '-',
    fmt(r?.executed.averageBatch),
    fmt(r?.executed.inferUsPerRow, 0),
  ];
  const rows = report.comparisons.map((c) => [
    c.what,
    String(c.concurrency),
    ...cells(run(c.candidate)),
    ...cells(run(c.baseline)),
    `${fmt(c.throughput)}×`,
    fmt(c.p50),
    fmt(c.p99),
    `≥ ${fmt(c.target, 1)}× ${c.met ? 'met' : 'MISSED'}`,
  ]);
  const side = (label: string) => [label, 'rps', 'p50 ms', 'p99 ms', 'err', 'inf/exec', 'avg batch', 'run µs/row'];
  const header = ['comparison', 'conc', ...side('candidate'), ...side('baseline'), 'rps ratio', 'p50', 'p99', 'target'];
  return renderTable(header, rows, 3);
}

/** Which batch sizes the batched rows executed, e.g. `densenet_batched: 8×412, 7×3`. */
function formatBatchSizes(report: ComputeReport): string {
  return report.runs
    .filter((r) => r.executed.averageBatch > 1)
    .map((r) => {
      const sizes = Object.entries(r.executed.bySize)
        .filter(([, n]) => n > 0)
        .sort(([a], [b]) => Number(b) - Number(a))
        .map(([size, n]) => `${size}×${n}`);
      return `${r.model} executions by batch size: ${sizes.join(', ') || '-'}`;
    })
    .join('\n');
}

/** The worker's CPU by thread role per row: which of event loop and model instances bounded the figure. */
function formatThreadTable(report: ComputeReport): string {
  const rows = report.runs.map((r) => [
    r.model,
    r.mode,
    fmt(r.workerThreads.main, 0),
    fmt(r.workerThreads.ort, 0),
    fmt(r.workerThreads.gc, 0),
    fmt(r.workerThreads.other, 0),
    fmt(r.executed.inferPercent, 0),
  ]);
  const header = ['model', 'mode', 'event loop %', 'instance threads %', 'V8 helpers %', 'other %', 'instance busy %'];
  return renderTable(header, rows, 2);
}
