import { z } from 'zod';
import { AppError } from '../errors.ts';
import { takeSharedMemoryTensor } from './binary/shared-memory-input.ts';
import { decodeJsonTensor, InferTensorJson, JsonParameters } from './json-tensor.ts';
import { type SharedMemoryReader, sharedMemoryRefOf } from './shared-memory-ref.ts';
import type { Tensor } from './tensor.ts';
import { zodIssueMessage } from './zod-issue-message.ts';

/** The JSON infer request body (Open Inference Protocol REST: inference request), structure only. */
export const InferRequestJson = z.object({
  id: z.string().optional(),
  parameters: JsonParameters.optional(),
  inputs: z.array(InferTensorJson).min(1),
  outputs: z.array(z.object({ name: z.string().min(1), parameters: JsonParameters.optional() })).optional(),
});
export type InferRequestJson = z.infer<typeof InferRequestJson>;

/** A requested output; omitting `outputs` altogether asks for all of them. */
export interface InferRequestedOutput {
  name: string;
  parameters?: Record<string, unknown>;
}

/** A decoded infer request, independent of the wire (JSON, binary extension, gRPC). */
export interface InferRequest {
  id?: string;
  parameters?: Record<string, unknown>;
  inputs: Tensor[];
  outputs?: InferRequestedOutput[];
}

export interface ParseInferRequestOptions {
  /** Per-input element limit, checked against the shape before anything is allocated. Default 2^28. */
  maxElements?: number;
  /**
   * Reads inputs that name a shared memory region (Triton shared memory extension); without it such an input
   * is refused (the surface has no regions: the job queue).
   */
  sharedMemory?: SharedMemoryReader;
}

/**
 * Validates a parsed JSON infer request body and decodes its inputs into typed tensors.
 *
 * @throws AppError INVALID_ARGUMENT with a message naming the offending input, e.g.
 *   `input 'INPUT0': expected 16 elements (shape [1,16]), got 15`.
 * @example
 * const req = parseInferRequest(await c.req.json(), { maxElements: 1 << 24 });
 * req.inputs[0].data; // Int32Array for an INT32 input
 */
export function parseInferRequest(body: unknown, opts: ParseInferRequestOptions = {}): InferRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('INVALID_ARGUMENT', 'infer request must be a JSON object');
  }
  const inputs = (body as { inputs?: unknown }).inputs;
  if (!Array.isArray(inputs) || inputs.length === 0) {
    throw new AppError('INVALID_ARGUMENT', "infer request must have a non-empty 'inputs' array");
  }
  const parsed = InferRequestJson.safeParse(body);
  if (!parsed.success) throw new AppError('INVALID_ARGUMENT', zodIssueMessage(parsed.error, body, 'infer request'));
  const json = parsed.data;

  // Names first: a duplicate is cheaper to report than to find after decoding megabytes of data.
  const names = new Set<string>();
  for (const input of json.inputs) {
    if (names.has(input.name)) throw new AppError('INVALID_ARGUMENT', `duplicate input name '${input.name}'`);
    names.add(input.name);
  }
  const request: InferRequest = {
    inputs: json.inputs.map((input) => {
      const label = `input '${input.name}'`;
      const ref = sharedMemoryRefOf(input.parameters, input.name);
      return ref ? takeSharedMemoryTensor(input, ref, label, opts) : decodeJsonTensor(input, label, opts);
    }),
  };
  if (json.id !== undefined) request.id = json.id;
  if (json.parameters !== undefined) request.parameters = json.parameters;
  if (json.outputs !== undefined) request.outputs = json.outputs;
  return request;
}
