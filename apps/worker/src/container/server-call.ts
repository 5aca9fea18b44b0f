import { setTimeout as sleep } from 'node:timers/promises';
import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import type { InvocationJob } from '@nvcf/queue';
import type { ContainerRequest } from './container-request.ts';
import { callInference, type InferenceResponse } from './inference-call.ts';
import { inferenceHeaders } from './request-headers.ts';

/** A server's own 202 is polled through at this pace (NVCF's worker polls it on each client poll). */
const SERVER_POLL_MS = 250;

/** The headers a request goes to its server with: NVCF's, and the worker's span as the trace context. */
export function serverRequestHeaders(
  request: ContainerRequest,
  fv: FunctionVersion & { container: ContainerSpec },
  opts: { maxResponseBytes: number; trace: InvocationJob['trace'] },
): Record<string, string> {
  const headers = inferenceHeaders(request.job, fv, request.contentType, {
    assetDir: request.dirs.assetDir,
    largeOutputDir: request.dirs.largeOutputDir,
    maxResponseBytes: opts.maxResponseBytes,
    // The function's own account (a shared function's owner), as NVCF names it to a container.
    ncaId: fv.ncaId,
  });
  withTraceContext(headers, opts.trace);
  return headers;
}

/** Sends the request to its server and waits for the server's answer. */
export async function callServer(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  signal: AbortSignal,
): Promise<InferenceResponse> {
  let res = await callInference(url, { method: 'POST', headers, body, signal });
  // A server's own 202: NVCF's worker asks again with a GET on the same path until it has the answer.
  while (res.status === 202) {
    res.body.resume();
    await sleep(SERVER_POLL_MS, undefined, { signal });
    res = await callInference(url, { method: 'GET', headers, signal });
  }
  return res;
}

/** Replaces the client's W3C Trace Context headers with the worker's span (https://www.w3.org/TR/trace-context/). */
function withTraceContext(headers: Record<string, string>, trace: InvocationJob['trace']): void {
  if (!trace) return;
  headers.traceparent = trace.traceparent;
  if (trace.tracestate) headers.tracestate = trace.tracestate;
  else delete headers.tracestate;
}
