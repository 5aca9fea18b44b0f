import { AppError } from '@nvcf/protocol';
import { nodeIncoming, readRequestBody } from '@nvcf/service-kit';
import { Hono } from 'hono';
import { type DescribeRouteOptions, resolver } from 'hono-openapi';
import type { InferenceCore } from '../core/core-types.ts';
import { decodeInferCall } from '../inference/infer-call.ts';
import { answerInferCall } from '../inference/infer-exchange.ts';
import type { SystemSharedMemory } from '../shm/system-shared-memory.ts';
import { compressResponse } from './compress-response.ts';
import { modelPath, onModelRoutes } from './model-path.ts';
import { errorResponses, MODEL_ERRORS, TOO_LARGE } from './openapi-responses.ts';
import { InferenceErrorResponse, InferenceRequest, InferenceResponse } from './openapi-schemas.ts';

export interface InferRouteOptions {
  maxBodyBytes: number;
  maxElements: number;
  /** Regions inputs may be read from and outputs written to (Triton shared memory extension). */
  sharedMemory?: SystemSharedMemory;
}

const HEADER_LENGTH = 'Inference-Header-Content-Length';

const binaryBody = (description: string) => ({
  schema: { type: 'string', contentMediaType: 'application/octet-stream', description } as const,
});

/** The infer operation for the OpenAPI document: JSON, the binary tensor data extension, classification. */
const inferSpec: DescribeRouteOptions = {
  tags: ['inference'],
  summary: 'Inference',
  description:
    'Runs the model on the inputs and answers the requested outputs (all of them when none are named). Triton ' +
    'binary tensor data extension: with `Inference-Header-Content-Length: N` the body is N bytes of ' +
    '`inference_request` JSON followed by the tensors’ bytes, in input order, of each input whose ' +
    '`parameters.binary_data_size` gives its length; with `0` the whole body is the only input’s raw data. ' +
    'Outputs asked for with `binary_data` (or the request’s `binary_data_output`) answer the same layout. ' +
    'Classification extension: an output with `parameters.classification: k` answers its top k as ' +
    '"value:index[:label]" strings. Request bodies may be gzip or deflate (`Content-Encoding`); successful ' +
    'answers are compressed as `Accept-Encoding` asks. Models with a decoupled transaction policy answer only ' +
    'through generate_stream (or gRPC streaming).',
  parameters: [
    {
      name: HEADER_LENGTH,
      in: 'header',
      required: false,
      description: 'Length of the JSON part of a binary request; 0: the body is a single input’s raw data.',
      schema: { type: 'integer', minimum: 0 },
    },
  ],
  requestBody: {
    required: true,
    content: {
      'application/json': { schema: resolver(InferenceRequest) },
      'application/octet-stream': binaryBody(
        `With \`${HEADER_LENGTH}\`: the JSON inference_request, then the binary tensor data.`,
      ),
    },
  },
  responses: {
    200: {
      description: `The outputs. With any output binary: \`${HEADER_LENGTH}\` bytes of inference_response JSON, then the outputs’ bytes.`,
      headers: {
        [HEADER_LENGTH]: {
          description: 'Present when outputs travel binary: the length of the (decompressed) JSON part.',
          schema: { type: 'integer', minimum: 0 },
        },
      },
      content: {
        'application/json': { schema: resolver(InferenceResponse) },
        'application/octet-stream': binaryBody('The JSON inference_response, then the binary outputs.'),
      },
    },
    ...errorResponses(
      {
        ...MODEL_ERRORS,
        400: 'Unknown model, a version that is not a number, or a malformed request (the message names the part at fault).',
        413: TOO_LARGE,
        500: 'The model failed, or an output did not fit its shared memory region.',
        501: 'The model is decoupled: use generate_stream.',
        503: 'The requested version is not ready, or the model’s queue is full.',
      },
      InferenceErrorResponse,
    ),
  },
};

/**
 * `POST /v2/models/{m}[/versions/{v}]/infer`: parse, run on the core, encode (Open Inference Protocol REST;
 * Triton binary data extension), compressed as `Accept-Encoding` asks — the one route Triton compresses.
 */
export function inferRoute(core: InferenceCore, opts: InferRouteOptions): Hono {
  const app = new Hono();
  onModelRoutes(app, 'POST', 'infer', inferSpec, compressResponse(), async (c) => {
    const model = modelPath(c);
    if (core.isDecoupled(model.name, model.version)) {
      throw new AppError('UNIMPLEMENTED', "HTTP end point doesn't support models with decoupled transaction policy");
    }
    const body = await readRequestBody(c.req.raw, opts.maxBodyBytes, nodeIncoming(c.env));
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
