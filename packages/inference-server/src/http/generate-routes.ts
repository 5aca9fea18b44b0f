import { AppError, encodeHttpInferResponse, tritonHttpStatus } from '@nvcf/protocol';
import { readRequestBody } from '@nvcf/service-kit';
import { Hono } from 'hono';
import type { CoreInferRequest, CoreInferResponse, InferenceCore } from '../core/core-types.ts';
import { decodeInferCall } from '../inference/infer-call.ts';
import { kserveError } from './kserve-error.ts';
import { type ModelPath, modelPath, onModelRoutes } from './model-path.ts';
import { GenerateRequest, GenerateResponse } from './openapi-extension-schemas.ts';
import { errorResponses, jsonContent, jsonResponse, MODEL_ERRORS, TOO_LARGE } from './openapi-responses.ts';

export interface GenerateRouteOptions {
  maxBodyBytes: number;
  maxElements: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A generate request as the core's request (Triton's generate extension): each key that names one of the model's
 * inputs is that input, its value a scalar or a (nested) list laid out by the input's configured shape (a batching
 * model gets a batch of one); `id` and `parameters` are the request's own; any other key is a request parameter.
 * The KServe V2 decoding then checks it as it checks an infer request.
 */
function generateCall(core: InferenceCore, model: ModelPath, body: Buffer, maxElements: number): CoreInferRequest {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('INVALID_ARGUMENT', 'failed to parse the request JSON buffer');
  }
  if (!isObject(json)) throw new AppError('INVALID_ARGUMENT', 'the generate request must be a JSON object');
  const metadata = core.modelMetadata(model.name, model.version);
  const { id, parameters, ...rest } = json;
  if (parameters !== undefined && !isObject(parameters)) {
    throw new AppError('INVALID_ARGUMENT', "the generate request's 'parameters' must be a JSON object");
  }
  const extra: Record<string, unknown> = {};
  const inputs: object[] = [];
  for (const [key, value] of Object.entries(rest)) {
    const spec = metadata.inputs.find((t) => t.name === key);
    if (!spec) {
      extra[key] = value;
      continue;
    }
    const data = Array.isArray(value) ? value.flat(Number.POSITIVE_INFINITY) : [value];
    // The configured shape with its variable dimensions filled in: the batch (if any) is one, the first other
    // variable dimension takes whatever the elements leave.
    const fixed = spec.shape.reduce((n, d) => (d === -1 ? n : n * d), 1);
    const batching = core.modelBatches(model.name);
    let filled = false;
    const shape = spec.shape.map((d, i) => {
      if (d !== -1) return d;
      if (batching && i === 0) return 1;
      if (filled) return 1;
      filled = true;
      return fixed === 0 ? 0 : Math.floor(data.length / fixed);
    });
    inputs.push({ name: key, datatype: spec.datatype, shape, data });
  }
  const request = {
    ...(id !== undefined ? { id } : {}),
    ...(parameters !== undefined || Object.keys(extra).length > 0 ? { parameters: { ...extra, ...parameters } } : {}),
    inputs,
  };
  return decodeInferCall(core, model, { json: request }, undefined, maxElements).request;
}

/** One response as the generate extension's JSON: the model, the id, and each output by name (a scalar for one element). */
function generateJson(res: CoreInferResponse): string {
  const kserve = JSON.parse(
    encodeHttpInferResponse({
      model_name: res.modelName,
      model_version: res.modelVersion,
      ...(res.id !== undefined ? { id: res.id } : {}),
      outputs: res.outputs,
    }).body.toString('utf8'),
  ) as { outputs: { name: string; data: unknown[] }[] };
  const out: Record<string, unknown> = {
    model_name: res.modelName,
    model_version: res.modelVersion,
    ...(res.id !== undefined ? { id: res.id } : {}),
  };
  for (const o of kserve.outputs) out[o.name] = o.data.length === 1 ? o.data[0] : o.data;
  return JSON.stringify(out);
}

const errorMessage = (err: unknown) => (err instanceof AppError ? err.message : 'Internal error');

const GENERATE_ERRORS = {
  ...MODEL_ERRORS,
  400: 'Unknown model, a version that is not a number, or a malformed request.',
  413: TOO_LARGE,
  500: 'The model failed.',
  503: 'The requested version is not ready, or the model’s queue is full.',
};

const generateSpec = {
  tags: ['generate'],
  summary: 'Generate (one response)',
  description:
    "Triton generate extension: the request's keys map to the model's inputs by name, the response's outputs to " +
    'keys by name. The model must make exactly one response; decoupled models that make another number answer 400.',
  requestBody: { required: true, content: jsonContent(GenerateRequest) },
  responses: {
    200: jsonResponse('The one response.', GenerateResponse),
    ...errorResponses({
      ...GENERATE_ERRORS,
      400: `${GENERATE_ERRORS[400]} Also: the model made other than exactly one response.`,
    }),
  },
};

const generateStreamSpec = {
  tags: ['generate'],
  summary: 'Generate (server-sent events)',
  description:
    'Triton generate extension, the HTTP way to decoupled models: one server-sent event `data: <generate_response>` ' +
    'per response, as the model makes it. A failure before the first response is an ordinary error answer; after ' +
    'it, an event `data: {"error": "…"}` ends the stream. A client that goes away stops the model.',
  requestBody: { required: true, content: jsonContent(GenerateRequest) },
  responses: {
    200: {
      description: 'The responses as events, each a generate_response (or a final error_response).',
      content: {
        'text/event-stream': {
          schema: { type: 'string', description: 'Events `data: <JSON>` separated by blank lines.' } as const,
        },
      },
    },
    ...errorResponses(GENERATE_ERRORS),
  },
};

/**
 * Triton's generate extension, the HTTP way to a decoupled model (Triton generate extension):
 * `POST /v2/models/{m}[/versions/{v}]/generate` answers with exactly one response (a decoupled model that makes
 * another number is an error, in Triton's words), `…/generate_stream` with one server-sent event per response as the
 * model makes it. A stream's status is decided by its first response: a request refused before that is an ordinary
 * `{"error"}` answer; a failure after it is an event `{"error": …}` that ends the stream. A client that goes away
 * stops the model.
 */
export function generateRoutes(core: InferenceCore, opts: GenerateRouteOptions): Hono {
  const app = new Hono();
  const read = async (req: Request, model: ModelPath) =>
    generateCall(core, model, await readRequestBody(req, opts.maxBodyBytes), opts.maxElements);

  onModelRoutes(app, 'POST', 'generate', generateSpec, async (c) => {
    const model = modelPath(c);
    const request = { ...(await read(c.req.raw, model)), signal: c.req.raw.signal, inputsOwned: true };
    const responses: CoreInferResponse[] = [];
    await core.inferDecoupled(request, (r) => responses.push(r));
    const [only] = responses;
    if (!only || responses.length !== 1) {
      throw new AppError(
        'INVALID_ARGUMENT',
        'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses',
      );
    }
    return new Response(generateJson(only), { status: 200, headers: { 'content-type': 'application/json' } });
  });

  onModelRoutes(app, 'POST', 'generate_stream', generateStreamSpec, async (c) => {
    const model = modelPath(c);
    const request = { ...(await read(c.req.raw, model)), inputsOwned: true };
    const stop = new AbortController();
    const encoder = new TextEncoder();
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const pending: string[] = [];
    const send = (data: string) => {
      if (!controller) pending.push(data);
      else if (!stop.signal.aborted) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
    };
    // The first response (or the end, or a failure) decides the answer's status.
    let first: (() => void) | undefined;
    const started = new Promise<void>((resolve) => {
      first = resolve;
    });
    const run = core
      .inferDecoupled({ ...request, signal: stop.signal }, (r) => {
        send(generateJson(r));
        first?.();
      })
      .then(
        () => ({ ok: true as const }),
        (err: unknown) => ({ ok: false as const, err }),
      );
    const outcome = await Promise.race([run, started.then(() => undefined)]);
    if (outcome && !outcome.ok && pending.length === 0) {
      const { err } = outcome;
      if (err instanceof AppError) return kserveError(tritonHttpStatus(err.code), err.message);
      throw err;
    }
    const body = new ReadableStream<Uint8Array>({
      start(ctrl) {
        for (const data of pending.splice(0)) ctrl.enqueue(encoder.encode(`data: ${data}\n\n`));
        controller = ctrl;
        void run.then((end) => {
          try {
            if (!end.ok) ctrl.enqueue(encoder.encode(`data: ${JSON.stringify({ error: errorMessage(end.err) })}\n\n`));
            ctrl.close();
          } catch {
            // The client is gone and the stream cancelled: nothing to send to.
          }
        });
      },
      cancel() {
        stop.abort();
      },
    });
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    });
  });
  return app;
}
