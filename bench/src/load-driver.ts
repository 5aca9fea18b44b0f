import { type LatencySummary, summarize } from './latency-stats.ts';

/** One request of a target; throws (or rejects) when the request failed. */
export type Call = () => Promise<void>;

export interface LoadOptions {
  /** Loops issuing requests back to back. */
  concurrency: number;
  warmupMs: number;
  measureMs: number;
  /** Called when the measurement window opens and closes (e.g. to sample CPU). */
  onWindowStart?: () => void;
  onWindowEnd?: () => void;
}

export interface LoadResult extends LatencySummary {
  concurrency: number;
  windowMs: number;
  /** Successful requests completed in the window, per second. */
  rps: number;
  errors: number;
  /** Error message → count, for errors completed in the window. */
  errorKinds: Record<string, number>;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 200);

/**
 * Closed-loop load: `concurrency` loops each await one call, then issue the next. A request counts when it
 * completes inside the window [warm-up end, warm-up end + measure], so the window sees steady state on
 * both edges; loops stop issuing at the window's end and the in-flight requests drain before returning.
 */
export async function runLoad(call: Call, opts: LoadOptions): Promise<LoadResult> {
  const begin = performance.now();
  const windowStart = begin + opts.warmupMs;
  const windowEnd = windowStart + opts.measureMs;
  const latencies: number[] = [];
  const errorKinds = new Map<string, number>();
  let errors = 0;

  // Each hook fires once: on its timer, or after the loops when the loops beat the timer to the window's end.
  const once = (fn: (() => void) | undefined) => {
    let fired = false;
    return () => {
      if (!fired) fn?.();
      fired = true;
    };
  };
  const startHook = once(opts.onWindowStart);
  const endHook = once(opts.onWindowEnd);
  const timers = [setTimeout(startHook, opts.warmupMs), setTimeout(endHook, opts.warmupMs + opts.measureMs)];
  const loop = async () => {
    while (performance.now() < windowEnd) {
      const t0 = performance.now();
      let failure: unknown;
      try {
        await call();
      } catch (err) {
        failure = err ?? new Error('unknown failure');
      }
      const t1 = performance.now();
      if (t1 < windowStart || t1 > windowEnd) continue;
      if (failure === undefined) {
        latencies.push(t1 - t0);
      } else {
        errors++;
        const kind = describe(failure);
        errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, loop));
  } finally {
    for (const t of timers) clearTimeout(t);
    startHook();
    endHook();
  }
  const summary = summarize(latencies);
  return {
    concurrency: opts.concurrency,
    windowMs: opts.measureMs,
    rps: summary.count / (opts.measureMs / 1000),
    errors,
    errorKinds: Object.fromEntries(errorKinds),
    ...summary,
  };
}

/** What samples a measurement window: started when it opens, read when it closes. */
export interface WindowProbes {
  cpu: { start(): void; stop(): Record<string, number> };
  cost: { start(): void; end(): void };
}

/** `runLoad` with the CPU and Redis-cost probes started and stopped at the edges of its measurement window. */
export async function runMeasuredLoad(
  call: Call,
  opts: Omit<LoadOptions, 'onWindowStart' | 'onWindowEnd'>,
  probes: WindowProbes,
): Promise<LoadResult & { cpuPercent: Record<string, number> }> {
  let cpuPercent: Record<string, number> = {};
  const result = await runLoad(call, {
    ...opts,
    onWindowStart: () => {
      probes.cpu.start();
      probes.cost.start();
    },
    onWindowEnd: () => {
      cpuPercent = probes.cpu.stop();
      probes.cost.end();
    },
  });
  return { ...result, cpuPercent };
}

/** Runs cleanups in reverse order of registration; a failing one is logged and the rest still run. */
export async function runCleanups(cleanups: (() => Promise<void> | void)[], log: (msg: string) => void): Promise<void> {
  for (const cleanup of [...cleanups].reverse()) {
    try {
      await cleanup();
    } catch (err) {
      log(`cleanup failed: ${(err as Error).message}`);
    }
  }
}
