import { answerInferCall, type InferCall, type InferenceCore } from '@nvcf/inference-server';
import { encodeModelInferResponse, serializeModelInferResponse } from '@nvcf/kserve-grpc';
import { type InvocationResult, MODEL_INFER_RESPONSE_TYPE, successResult } from '@nvcf/queue';
import { answerInChunks } from './batch-chunks.ts';
import type { ModelJob } from './job-input.ts';
import type { ModelRunner, ModelRunnerDeps } from './model-runner.ts';

export interface UnaryRunnerDeps extends ModelRunnerDeps {
  /** A streaming request's batch is answered this many rows at a time, one event each (0: whole). */
  streamChunkRows: number;
}

/**
 * A model that answers each request once: a large batch to a streaming client in chunks, each chunk's answer an
 * event (batch-chunks.ts); anything else in one piece, rendered as the job asks (KServe gRPC or HTTP).
 */
export function createUnaryRunner(deps: UnaryRunnerDeps): ModelRunner {
  const { core, streamChunkRows } = deps;
  return async (job, events) => {
    const call = await deps.decode(job);
    if (job.stream && streamChunkRows > 0) {
      const chunked = await answerInChunks(core, call, streamChunkRows, (reply, last) =>
        events.append(job.requestId, [{ data: reply.body.toString('utf8'), last }]),
      );
      if (chunked) {
        const note = { id: job.requestId, streamed: true, detail: 'answered in chunks as server-sent events' };
        return {
          result: successResult({ contentType: 'application/json', body: Buffer.from(JSON.stringify(note)) }),
          eventsSent: true,
        };
      }
    }
    return { result: await render(core, job, call), eventsSent: false };
  };
}

/** Runs a decoded call and renders its answer as the job asks. */
async function render(core: InferenceCore, job: ModelJob, call: InferCall): Promise<InvocationResult> {
  // The decoded tensors are this job's alone (the chunked path slices them; it did not run).
  const request = { ...call.request, inputsOwned: true };
  if (job.respond === 'kserve-grpc') {
    // Rendered here, once, as the gateway's gRPC port sends it: no HTTP form in between.
    const body = serializeModelInferResponse(encodeModelInferResponse(await core.infer(request)));
    return successResult({ contentType: MODEL_INFER_RESPONSE_TYPE, body });
  }
  const reply = await answerInferCall(core, { ...call, request });
  return successResult({ contentType: reply.contentType, body: reply.body, headers: reply.headers });
}
