import {
  type DecodeInferRequestOptions,
  decodeModelInferRequest,
  encodeModelInferResponse,
  type GrpcInferRequest,
  type ModelInferRequestMsg,
  type ModelInferResponseMsg,
} from '@nvcf/kserve-grpc';
import { AppError, encodeBinaryTensorData, type SharedMemoryRef, sharedMemoryRefOf } from '@nvcf/protocol';
import type { InferenceCore } from '../core/core-types.ts';
import type { SystemSharedMemory } from '../shm/system-shared-memory.ts';
import { ResponseQueue, type StreamAnswer } from './model-stream-infer.ts';

/** What a client leaves unset in a gRPC message is an empty string. */
export const orUndefined = (s: string) => (s === '' ? undefined : s);

/** Triton's `triton_final_response` response parameter. */
const FINAL = { triton_final_response: { bool_param: true, parameter_choice: 'bool_param' } } as const;
const NOT_FINAL = { triton_final_response: { bool_param: false, parameter_choice: 'bool_param' } } as const;

type CallState = { cancelled: boolean };
export type ModelInfer = (msg: ModelInferRequestMsg, call: CallState) => Promise<ModelInferResponseMsg>;

/** ModelInfer: decodes the message (inputs from shared memory too), runs it, writes shared memory outputs. */
export function createModelInfer(
  core: InferenceCore,
  shm: SystemSharedMemory,
  decodeOpts: DecodeInferRequestOptions,
): ModelInfer {
  return async (msg, call) => {
    if (core.isDecoupled(msg.model_name, orUndefined(msg.model_version))) {
      throw new AppError('UNIMPLEMENTED', "ModelInfer RPC doesn't support models with decoupled transaction policy");
    }
    const request = decodeModelInferRequest(msg, decodeOpts);
    const outputShm = sharedMemoryOutputs(request.outputs);
    // Cheap cancellation: a request whose caller has gone (cancel, deadline) is not run at all.
    if (call.cancelled) throw new AppError('CANCELLED', 'request cancelled by the client');
    const res = await core.infer(request);
    if (outputShm.size === 0) return encodeModelInferResponse(res);
    for (const output of res.outputs) {
      const ref = outputShm.get(output.name);
      if (ref) {
        const bytes = encodeBinaryTensorData(output.datatype, output.shape, output.data, `output '${output.name}'`);
        shm.write(ref, bytes, output.name);
      }
    }
    return encodeModelInferResponse(res, { inSharedMemory: new Set(outputShm.keys()) });
  };
}

/**
 * ModelStreamInfer's request: every response carries `triton_final_response` (Triton's); a decoupled model's
 * responses come as it makes them (false on each), then — only if the request set
 * `triton_enable_empty_final_response` — an empty response that says the request is complete.
 */
export function createStreamInfer(
  core: InferenceCore,
  infer: ModelInfer,
  decodeOpts: DecodeInferRequestOptions,
): (msg: ModelInferRequestMsg, call: CallState) => Promise<StreamAnswer> {
  return async (msg, call) => {
    const { triton_enable_empty_final_response: emptyFinal, ...parameters } = msg.parameters;
    if (emptyFinal !== undefined && emptyFinal.parameter_choice !== 'bool_param') {
      throw new AppError(
        'INVALID_ARGUMENT',
        "invalid value type for 'triton_enable_empty_final_response' parameter, expected bool_param.",
      );
    }
    const request = { ...msg, parameters };
    if (!core.isDecoupled(msg.model_name, orUndefined(msg.model_version))) {
      const response = await infer(request, call);
      return { ...response, parameters: { ...response.parameters, ...FINAL } };
    }
    const decoded = decodeModelInferRequest(request, decodeOpts);
    if (call.cancelled) throw new AppError('CANCELLED', 'request cancelled by the client');
    const queue = new ResponseQueue<ModelInferResponseMsg>();
    core
      .inferDecoupled(decoded, (res) => {
        const response = encodeModelInferResponse(res);
        queue.push({ ...response, parameters: { ...response.parameters, ...NOT_FINAL } });
      })
      .then(
        () => {
          if (emptyFinal?.bool_param === true) {
            queue.push({
              model_name: msg.model_name,
              model_version: msg.model_version,
              id: msg.id,
              parameters: FINAL,
              outputs: [],
              raw_output_contents: [],
            });
          }
          queue.end();
        },
        (err: unknown) => queue.fail(err),
      );
    return queue;
  };
}

/** Requested outputs that go to a shared memory region, by name (Triton shared memory extension). */
function sharedMemoryOutputs(outputs: GrpcInferRequest['outputs']): Map<string, SharedMemoryRef> {
  const refs = new Map<string, SharedMemoryRef>();
  for (const output of outputs ?? []) {
    const ref = sharedMemoryRefOf(output.parameters, output.name);
    if (!ref) continue;
    if (output.parameters?.shared_memory_byte_size === undefined) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${output.name}'`,
      );
    }
    if (output.classification !== undefined) {
      throw new AppError('INVALID_ARGUMENT', "Output can't set both 'shared_memory_region' and 'classification'");
    }
    refs.set(output.name, ref);
  }
  return refs;
}
