import { AppError } from '@nvcf/protocol';
import { readRequestBody } from '@nvcf/service-kit';
import { Hono } from 'hono';
import type { InferenceCore } from '../core/core-types.ts';
import { decodeInferCall } from '../inference/infer-call.ts';
import { answerInferCall } from '../inference/infer-exchange.ts';
import type { SystemSharedMemory } from '../shm/system-shared-memory.ts';
import { compressResponse } from './compress-response.ts';
import { modelPath, modelRoutes } from './model-path.ts';

export interface InferRouteOptions {
  maxBodyBytes: number;
  maxElements: number;
  /** Regions inputs may be read from and outputs written to (Triton shared memory extension). */
  sharedMemory?: SystemSharedMemory;
}

/**
 * `POST /v2/models/{m}[/versions/{v}]/infer`: parse, run on the core, encode (Open Inference Protocol REST;
 * Triton binary data extension), compressed as `Accept-Encoding` asks — the one route Triton compresses.
 */
export function inferRoute(core: InferenceCore, opts: InferRouteOptions): Hono {
  const app = new Hono();
  app.on('POST', modelRoutes('infer'), compressResponse(), async (c) => {
    const model = modelPath(c);
    if (core.isDecoupled(model.name, model.version)) {
      throw new AppError('UNIMPLEMENTED', "HTTP end point doesn't support models with decoupled transaction policy");
    }
    const body = await readRequestBody(c.req.raw, opts.maxBodyBytes);
    const header = c.req.header('inference-header-content-length');
    const call = decodeInferCall(core, model, body, header, opts.maxElements, opts.sharedMemory);
    // Aborted when the client disconnects: the core then drops the request if it is still queued. The body was
    // read for this call alone, so its tensors may move to the model's thread without a copy.
    const reply = await answerInferCall(
      core,
      { ...call, request: { ...call.request, inputsOwned: true } },
      c.req.raw.signal,
    );
    return new Response(new Uint8Array(reply.body.buffer, reply.body.byteOffset, reply.body.length), {
      status: 200,
      headers: { 'content-type': reply.contentType, ...reply.headers },
    });
  });
  return app;
}
