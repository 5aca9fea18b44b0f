import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { modelFunctionId } from '@nvcf/worker';
import type { BenchConfig } from './bench-config.ts';
import { loadInprocModels } from './inproc-target.ts';
import { type LatencySummary, summarize } from './latency-stats.ts';
import { runCleanups } from './load-driver.ts';
import { startProductStack } from './product-stack.ts';
import { fmt, ms, renderTable } from './report.ts';

export const STREAM_MODEL = 'generative';
/** The prompt's last byte is the first context token: 'H'. */
const PROMPT = 'H';
const START_TOKEN = 0x48;

export interface StreamSectionOptions {
  config: BenchConfig;
  redisUrl: string;
  modelRepository: string;
  log(msg: string): void;
}

/** One completion, ms from sending the request (or starting the loop). */
export interface StreamSample {
  /** To the first `data:` event (first token). */
  firstMs: number;
  /** To the N-th token event. */
  lastMs: number;
  /** To `data: [DONE]` (stream) or the end of the loop (inproc). */
  doneMs: number;
  /** (last − first) / (N − 1). */
  perEventMs: number;
}

export interface StreamModeResult {
  mode: 'stream' | 'inproc';
  runs: number;
  tokens: number;
  ttfe: LatencySummary;
  perEvent: LatencySummary;
  total: LatencySummary;
  samples: StreamSample[];
}

export interface StreamReport {
  model: string;
  functionId: string;
  tokens: number;
  warmupRuns: number;
  stream: StreamModeResult;
  inproc: StreamModeResult;
  /** stream p50 / inproc p50 (and p99 / p99). */
  ratios: { ttfeP50: number; ttfeP99: number; perEventP50: number; perEventP99: number };
}

/**
 * Issue 4: SSE streaming of the `generative` function through gateway → Redis → worker, one completion of
 * N tokens at a time, beside the same greedy decode loop on the same model in this process (cpu, 1/1 threads):
 * time to first event, and per-event overhead = (time to N-th event − time to first) / (N − 1).
 */
export async function runStreamSection(opts: StreamSectionOptions): Promise<StreamReport> {
  const { config, log } = opts;
  const n = config.streamTokens;
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    log('stream: starting gateway + worker children for the generative function');
    const inproc = await loadInprocModels(opts.modelRepository, [STREAM_MODEL]);
    cleanups.push(() => inproc.close());
    const stack = await startProductStack({
      redisUrl: opts.redisUrl,
      keyPrefix: `benchs${Math.random().toString(36).slice(2, 8)}`,
      modelRepository: opts.modelRepository,
      models: [STREAM_MODEL],
      logLevel: config.childLogLevel,
      workerConcurrency: 1,
      maxSockets: 1,
      pollSeconds: config.pollSeconds,
    });
    cleanups.push(() => stack.close());
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const functionId = modelFunctionId(STREAM_MODEL);
    const url = new URL(`/v2/nvcf/pexec/functions/${functionId}`, stack.url);
    // A chat request: its chunks are `chat.completion.chunk`s (a bare prompt streams `text_completion`s).
    const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: PROMPT }], max_tokens: n }));
    const streamOnce = () => sseCompletion(agent, url, stack.adminKey, body, n);

    const model = inproc.model(STREAM_MODEL);
    const inprocOnce = async (): Promise<StreamSample> => {
      const t0 = performance.now();
      let token = BigInt(START_TOKEN);
      let firstMs = 0;
      let lastMs = 0;
      for (let i = 0; i < n; i++) {
        const [logits] = await model.run([
          { name: 'TOKEN', datatype: 'INT64', shape: [1], data: BigInt64Array.from([token]) },
        ]);
        const data = logits?.data as Float32Array;
        let best = 0;
        for (let j = 1; j < data.length; j++) if ((data[j] as number) > (data[best] as number)) best = j;
        token = BigInt(best);
        const t = performance.now() - t0;
        if (i === 0) firstMs = t;
        lastMs = t;
      }
      const doneMs = performance.now() - t0;
      return { firstMs, lastMs, doneMs, perEventMs: (lastMs - firstMs) / (n - 1) };
    };

    const measure = async (mode: 'stream' | 'inproc', once: () => Promise<StreamSample>) => {
      for (let i = 0; i < config.streamWarmupRuns; i++) await once();
      const samples: StreamSample[] = [];
      for (let i = 0; i < config.streamRuns; i++) {
        samples.push(await Promise.race([once(), stack.gateway.died, stack.worker.died]));
      }
      const result: StreamModeResult = {
        mode,
        runs: samples.length,
        tokens: n,
        ttfe: summarize(samples.map((s) => s.firstMs)),
        perEvent: summarize(samples.map((s) => s.perEventMs)),
        total: summarize(samples.map((s) => s.doneMs)),
        samples,
      };
      log(
        `stream ${mode}: ttfe p50 ${result.ttfe.p50Ms.toFixed(3)} ms, per-event p50 ${result.perEvent.p50Ms.toFixed(4)} ms, ` +
          `total p50 ${result.total.p50Ms.toFixed(2)} ms`,
      );
      return result;
    };
    // The product first, then the baseline: the baseline's loop must not share the window with the stack's.
    const stream = await measure('stream', streamOnce);
    const base = await measure('inproc', inprocOnce);
    return {
      model: STREAM_MODEL,
      functionId,
      tokens: n,
      warmupRuns: config.streamWarmupRuns,
      stream,
      inproc: base,
      ratios: {
        ttfeP50: stream.ttfe.p50Ms / base.ttfe.p50Ms,
        ttfeP99: stream.ttfe.p99Ms / base.ttfe.p99Ms,
        perEventP50: stream.perEvent.p50Ms / base.perEvent.p50Ms,
        perEventP99: stream.perEvent.p99Ms / base.perEvent.p99Ms,
      },
    };
  } finally {
    await runCleanups(cleanups, log);
  }
}

/**
 * One streamed completion, the body read as it arrives: times the first `data:` event, the N-th token
 * chunk and `data: [DONE]`; anything but a 200 text/event-stream with N token chunks and [DONE] throws.
 */
function sseCompletion(agent: Agent, url: URL, adminKey: string, body: Buffer, n: number): Promise<StreamSample> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${adminKey}`,
          accept: 'text/event-stream',
          'content-type': 'application/json',
          'content-length': body.length,
        },
      },
      (res) => {
        const type = String(res.headers['content-type'] ?? '');
        if (res.statusCode !== 200 || !type.startsWith('text/event-stream')) {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (s: string) => {
            text += s;
          });
          res.on('end', () => reject(new Error(`stream: HTTP ${res.statusCode} ${type} ${text.slice(0, 200)}`)));
          return;
        }
        let firstMs: number | undefined;
        let lastMs: number | undefined;
        let doneMs: number | undefined;
        let tokens = 0;
        let partial = '';
        res.setEncoding('utf8');
        res.on('data', (s: string) => {
          const now = performance.now() - t0;
          partial += s;
          let nl = partial.indexOf('\n');
          while (nl >= 0) {
            const line = partial.slice(0, nl).replace(/\r$/, '');
            partial = partial.slice(nl + 1);
            nl = partial.indexOf('\n');
            if (!line.startsWith('data:')) continue;
            firstMs ??= now;
            const data = line.slice(5).trim();
            if (data === '[DONE]') {
              doneMs = now;
              continue;
            }
            let chunk: { object?: string; choices?: { delta?: { content?: string } }[] } = {};
            try {
              chunk = JSON.parse(data) as typeof chunk;
            } catch {}
            if (chunk.object !== 'chat.completion.chunk') {
              res.destroy();
              reject(new Error(`stream: unexpected event ${data.slice(0, 200)}`));
              return;
            }
            if (chunk.choices?.[0]?.delta?.content !== undefined) {
              tokens++;
              if (tokens === n) lastMs = now;
            }
          }
        });
        res.on('error', reject);
        res.on('end', () => {
          if (firstMs === undefined || lastMs === undefined || doneMs === undefined || tokens !== n) {
            reject(
              new Error(`stream: ${tokens}/${n} token events, [DONE] ${doneMs === undefined ? 'missing' : 'seen'}`),
            );
            return;
          }
          resolve({ firstMs, lastMs, doneMs, perEventMs: (lastMs - firstMs) / (n - 1) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** stream vs inproc, one row each, then the ratio stream / inproc. */
export function formatStreamTable(r: StreamReport): string {
  const row = (m: StreamModeResult) => [
    m.mode,
    String(m.runs),
    ms(m.ttfe.p50Ms),
    ms(m.ttfe.p99Ms),
    fmt(m.perEvent.p50Ms, 4),
    fmt(m.perEvent.p99Ms, 4),
    ms(m.total.p50Ms),
    ms(m.total.p99Ms),
  ];
  const x = (v: number) => `${fmt(v, 1)}×`;
  return renderTable(
    ['mode', 'runs', 'ttfe p50', 'ttfe p99', 'per-event p50', 'per-event p99', 'total p50', 'total p99'],
    [
      row(r.stream),
      row(r.inproc),
      ['stream/inproc', '', x(r.ratios.ttfeP50), x(r.ratios.ttfeP99), x(r.ratios.perEventP50), x(r.ratios.perEventP99)],
    ],
    1,
  );
}
