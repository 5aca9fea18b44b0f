import { setTimeout as sleep } from 'node:timers/promises';
import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import {
  type EventStream,
  type InvocationJob,
  type InvocationProcessor,
  type InvocationResult,
  inputKeptBeside,
  type RequestStore,
  successResult,
} from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import type { ObjectStore } from '@nvcf/storage';
import { problemResult } from '../inference/problem-result.ts';
import type { ServerInstance } from './container-servers.ts';
import { connectionErrorResult, serverErrorResult } from './error-mapping.ts';
import { callInference, InferenceConnectionError, type InferenceResponse, readBody } from './inference-call.ts';
import { watchProgressFile } from './progress-file.ts';
import { openRequestDirs } from './request-dirs.ts';
import { inferenceHeaders } from './request-headers.ts';
import { serverUrl } from './server-url.ts';
import type { SharedTicker } from './shared-ticker.ts';
import { relayEvents } from './sse-relay.ts';

/** A server's own 202 is polled through at this pace (NVCF's worker polls it on each client poll). */
const SERVER_POLL_MS = 250;

export interface ContainerProcessorDeps {
  fv: FunctionVersion & { container: ContainerSpec };
  /** The version's server on this worker, while there is one. */
  server: () => ServerInstance | undefined;
  store: RequestStore;
  events: EventStream;
  objects: ObjectStore;
  largeResults: {
    settle(
      requestId: string,
      result: InvocationResult,
      artefacts?: { name: string; body: Buffer }[],
    ): Promise<InvocationResult>;
  };
  logger: Logger;
  workDir: string;
  timeoutMs: number;
  /** `NVCF-MAX-RESPONSE-SIZE-BYTES`: larger answers leave as the zip + 302. */
  maxResponseBytes: number;
  /** The worker's one timer for per-request checks (progress files, clients that left). */
  ticker: SharedTicker;
  /**
   * The running job's span as W3C Trace Context fields (tracing on): the server's request carries them instead
   * of the client's, so the function's own spans join the invocation's trace under the worker's. Absent: off.
   */
  traceContext?: () => InvocationJob['trace'];
}

/**
 * A container function's job (NVCF container functions): the client's body goes to the version's inference
 * server at `inferenceUrl` with NVCF's headers, and its answer comes back as NVCF's worker returns it (errors
 * mapped, a 202 polled through, an event stream relayed as it arrives, large outputs zipped). A server that
 * cannot be reached is retried only while the request never reached it (connection refused, no server up).
 */
export function createContainerProcessor(deps: ContainerProcessorDeps): InvocationProcessor {
  const { fv } = deps;
  /** Requests whose answer is being relayed as events right now. */
  const streamed = new Set<string>();
  return async (queued, ctx) => {
    // The delivery is the job's claim (see invocation-processor.ts). A server may act on what it is sent, so a
    // request settled meanwhile (cancelled after its job was delivered) is not forwarded: one read, in the same
    // round trip as that of an input kept beside the job.
    const [settled, kept] = await Promise.all([
      deps.store.settled(queued.requestId),
      inputKeptBeside(queued.input) ? deps.store.readInput(queued.requestId) : undefined,
    ]);
    if (settled) return undefined;
    const log = deps.logger.child({ requestId: queued.requestId, functionId: fv.id, versionId: fv.versionId });
    if (queued.input.kind === 'kserve') {
      return problemResult(
        'UNIMPLEMENTED',
        'a container function takes an HTTP body; the KServe gRPC port serves model functions',
        'nvcf-worker-service',
        queued.requestId,
      );
    }
    const contentType = queued.input.contentType;
    const body = bodyOf(queued, kept, ctx.entryBytes);
    if (!body) {
      // Only an expired request loses its input (both share the TTL).
      return problemResult(
        'INTERNAL',
        'Internal error: the invocation input expired before a worker took it',
        'nvcf-worker-service',
        queued.requestId,
      );
    }
    const server = deps.server();
    if (!server?.healthy) {
      // Nothing was sent: another attempt (here once the server is back, or on another worker) is safe.
      if (ctx.attempt < ctx.maxAttempts) throw new Error('the inference server is not up');
      return connectionErrorResult(queued.requestId);
    }
    // The server's own origin, whatever the stored version says (container-servers.ts never serves such a version).
    const url = serverUrl(server.base, fv.inferenceUrl);
    if (!url) {
      log.error(
        { inferenceUrl: fv.inferenceUrl },
        "refusing an inferenceUrl that is not a path of the function's server",
      );
      return problemResult(
        'INVALID_ARGUMENT',
        "the function's inferenceUrl is not a path of its server",
        'nvcf-worker-service',
        queued.requestId,
      );
    }
    let dirs: Awaited<ReturnType<typeof openRequestDirs>>;
    try {
      dirs = await openRequestDirs(deps.workDir, queued.requestId, queued.assetIds ?? [], deps.objects);
    } catch (err) {
      log.error({ err }, 'downloading assets failed');
      return problemResult(
        'INTERNAL',
        'Internal error while downloading assets',
        'nvcf-worker-service',
        queued.requestId,
      );
    }
    const progress = watchProgressFile(
      dirs.largeOutputDir,
      queued.requestId,
      (percent, partial) => deps.store.reportProgress(queued.requestId, percent, partial),
      deps.ticker,
    );
    const abort = new AbortController();
    const deadline = setTimeout(
      () => abort.abort(new Error('the inference server did not answer in time')),
      deps.timeoutMs,
    );
    /** The request may have reached the server: from here on, sending it again is not safe. */
    let sent = false;
    // A server being replaced (new secrets) is stopped only once it has answered this.
    const release = server.hold();
    try {
      const headers = inferenceHeaders(queued, fv, contentType, {
        assetDir: dirs.assetDir,
        largeOutputDir: dirs.largeOutputDir,
        maxResponseBytes: deps.maxResponseBytes,
        // The function's own account (a shared function's owner), as NVCF names it to a container.
        ncaId: fv.ncaId,
      });
      withTraceContext(headers, deps.traceContext?.());
      sent = true;
      let res = await callInference(url, { method: 'POST', headers, body, signal: abort.signal });
      // A server's own 202: NVCF's worker asks again with a GET on the same path until it has the answer.
      while (res.status === 202) {
        res.body.resume();
        await sleep(SERVER_POLL_MS, undefined, { signal: abort.signal });
        res = await callInference(url, { method: 'GET', headers, signal: abort.signal });
      }
      const { result, relayed } = await answer(res, queued, abort);
      await progress.stop();
      if (queued.stream) {
        if (!relayed) await answerAsEvent(queued.requestId, result);
        return result;
      }
      // Only the server's plain answer (a 2xx of its HTTP contract) becomes a large result.
      if (!result.ok || result.status >= 300) return result;
      const artefacts = await dirs.artefacts();
      // A caller that cannot follow a 302 (gRPC) gets the body direct.
      if (queued.directOnly) return result;
      return await deps.largeResults.settle(queued.requestId, result, artefacts);
    } catch (err) {
      if (err instanceof InferenceConnectionError || abort.signal.aborted) {
        const safe = err instanceof InferenceConnectionError && !err.sent && !abort.signal.aborted;
        if (safe && ctx.attempt < ctx.maxAttempts) {
          log.warn({ err: (err as Error).message, attempt: ctx.attempt }, 'inference server refused; will retry');
          throw err;
        }
        log.warn({ err: (err as Error).message }, 'inference connection error');
        return endStream(queued, connectionErrorResult(queued.requestId));
      }
      // Before the request went out another attempt is safe; after, the server may have acted on it.
      if (!sent) throw err;
      log.error({ err }, 'failed after the request reached the inference server; not retrying');
      const failed = problemResult(
        'INTERNAL',
        'Internal error while making inference request',
        'nvcf-worker-service',
        queued.requestId,
      );
      return endStream(queued, failed);
    } finally {
      release();
      streamed.delete(queued.requestId);
      clearTimeout(deadline);
      abort.abort();
      await progress.stop();
      await dirs.remove();
    }
  };

  /** A failure as the job's answer; a stream that started ends with it as its last event. */
  async function endStream(job: InvocationJob, failed: InvocationResult): Promise<InvocationResult> {
    if (job.stream && streamed.has(job.requestId)) {
      await deps.events.append(job.requestId, [{ data: failed.body.toString('utf8'), last: true, error: true }]);
    }
    return failed;
  }

  /**
   * The server's answer as the job's result: mapped errors, a stream relayed to a streaming client (`relayed`),
   * or the body whole (an event stream too, for a client that did not ask for one).
   */
  async function answer(
    res: InferenceResponse,
    job: InvocationJob,
    abort: AbortController,
  ): Promise<{ result: InvocationResult; relayed: boolean }> {
    const contentType = String(res.headers['content-type'] ?? 'application/octet-stream');
    if (res.status >= 400) {
      return { result: serverErrorResult(res.status, await readBody(res.body), job.requestId), relayed: false };
    }
    if (job.stream && contentType.startsWith('text/event-stream')) {
      streamed.add(job.requestId);
      await relayEvents(res.body, job.requestId, deps.events, abort, deps.ticker);
      const note = { id: job.requestId, streamed: true, detail: 'relayed as server-sent events' };
      return {
        result: successResult({ contentType: 'application/json', body: Buffer.from(JSON.stringify(note)) }),
        relayed: true,
      };
    }
    const body = await readBody(res.body);
    // Below 400, the server answered: its own status (a 2xx, a 3xx) goes to the client as it is.
    return {
      result: successResult({ status: res.status, contentType, body, headers: passedHeaders(res) }),
      relayed: false,
    };
  }

  /**
   * A streaming client's answer when the server did not stream: one event, then the end. A refusal is no
   * event at all: the gateway, still holding the response, answers it with its HTTP status.
   */
  async function answerAsEvent(requestId: string, result: InvocationResult): Promise<void> {
    if (result.ok) await deps.events.append(requestId, [{ data: result.body.toString('utf8'), last: true }]);
  }
}

/** Replaces the client's W3C Trace Context headers with the worker's span (https://www.w3.org/TR/trace-context/). */
function withTraceContext(headers: Record<string, string>, trace: InvocationJob['trace']): void {
  if (!trace) return;
  headers.traceparent = trace.traceparent;
  if (trace.tracestate) headers.tracestate = trace.tracestate;
  else delete headers.tracestate;
}

/** Response headers of the server's that reach the client (NVCF: any headers): all but per-connection ones. */
function passedHeaders(res: InferenceResponse): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || SKIPPED_RESPONSE_HEADERS.has(name) || name.startsWith('nvcf-')) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const SKIPPED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-type',
  'date',
  'server',
  'trailer',
  'upgrade',
]);

/**
 * The client's body as bytes: from the job, its queue entry (`entryBytes`) or the request store (`kept`); undefined
 * for a KServe gRPC call (no HTTP body to forward).
 */
function bodyOf(job: InvocationJob, kept: Buffer | undefined, entryBytes: Buffer | undefined): Buffer | undefined {
  const { input } = job;
  if (input.kind === 'json') return Buffer.from(JSON.stringify(input.value));
  if (input.kind === 'bytes') return Buffer.from(input.base64, 'base64');
  if (input.kind === 'entry') return entryBytes;
  if (input.kind === 'stored') return kept;
  return undefined;
}
