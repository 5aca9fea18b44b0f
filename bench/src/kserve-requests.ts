import {
  type Datatype,
  decodeBinaryTensorData,
  encodeBinaryTensorData,
  encodeHttpInferRequest,
  isDatatype,
  type Tensor,
} from '@nvcf/protocol';
import type { Payload } from './payloads.ts';

/** One HTTP request as sent on every iteration: body and headers built once. */
export interface HttpRequestSpec {
  body: Buffer;
  headers: Record<string, string>;
}

/** A ModelInfer request message as @grpc/grpc-js takes it (field names as in the .proto). */
export interface GrpcInferRequest {
  model_name: string;
  inputs: { name: string; datatype: string; shape: number[] }[];
  raw_input_contents: Buffer[];
}

/** The same inference for the worker's three surfaces. */
export interface KserveRequests {
  path: string;
  /** (a) the payload's KServe V2 JSON body. */
  json: HttpRequestSpec;
  /** (b) every input binary and `binary_data_output: true` (Triton binary data extension). */
  binary: HttpRequestSpec;
  /** (c) every input in `raw_input_contents`, as tritonclient.grpc sends it. */
  grpc: GrpcInferRequest;
}

export function kserveRequests(payload: Payload): KserveRequests {
  const encoded = encodeHttpInferRequest({ inputs: payload.tensors }, { binaryInputs: true, binaryDataOutput: true });
  if (encoded.inferenceHeaderContentLength === undefined) throw new Error(`${payload.model}: no binary part`);
  const raw = (t: Tensor) => {
    const bytes = encodeBinaryTensorData(t.datatype, t.shape, t.data, `input '${t.name}'`);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
  return {
    path: `/v2/models/${payload.model}/infer`,
    json: { body: payload.json, headers: { 'content-type': 'application/json' } },
    binary: {
      body: encoded.body,
      headers: {
        'content-type': 'application/octet-stream',
        'inference-header-content-length': String(encoded.inferenceHeaderContentLength),
      },
    },
    grpc: {
      model_name: payload.model,
      inputs: payload.tensors.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape })),
      raw_input_contents: payload.tensors.map(raw),
    },
  };
}

/** A ModelInfer response as the project's proto-loader options decode it (int64 shapes as strings). */
export interface GrpcInferResponse {
  outputs: { name: string; datatype: string; shape: (string | number)[] }[];
  raw_output_contents: Buffer[];
}

/** The typed outputs of a gRPC response whose outputs all came back in `raw_output_contents`. */
export function grpcOutputs(res: GrpcInferResponse): Tensor[] {
  if (res.raw_output_contents.length !== res.outputs.length) {
    throw new Error(`${res.outputs.length} outputs but ${res.raw_output_contents.length} raw_output_contents`);
  }
  return res.outputs.map((o, i) => {
    if (!isDatatype(o.datatype)) throw new Error(`output '${o.name}': unknown datatype ${o.datatype}`);
    const datatype: Datatype = o.datatype;
    const shape = o.shape.map(Number);
    const data = decodeBinaryTensorData(datatype, shape, res.raw_output_contents[i]!, `output '${o.name}'`);
    return { name: o.name, datatype, shape, data };
  });
}

/**
 * Checks, once before timing, that the worker computed the right thing: `simple` adds and subtracts
 * its inputs (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 − INPUT1); `classifier` ends in a softmax,
 * so its ten probabilities sum to 1. Throws naming the first difference.
 */
export function checkOutputs(payload: Payload, outputs: Tensor[], surface: string): void {
  const fail = (msg: string): never => {
    throw new Error(`${surface} ${payload.model}: ${msg}`);
  };
  const names = outputs.map((o) => o.name).sort();
  if (names.join() !== [...payload.outputs].sort().join()) fail(`unexpected outputs ${names.join(', ')}`);
  const values = (t: Tensor | undefined) => Array.from(t?.data as ArrayLike<number>, Number);
  const byName = (n: string) => outputs.find((o) => o.name === n) ?? payload.tensors.find((t) => t.name === n);
  if (payload.model === 'simple') {
    const [a, b] = [values(byName('INPUT0')), values(byName('INPUT1'))];
    const expect = { OUTPUT0: a.map((x, i) => x + b[i]!), OUTPUT1: a.map((x, i) => x - b[i]!) };
    for (const [name, want] of Object.entries(expect)) {
      const got = values(byName(name));
      if (got.join() !== want.join()) fail(`${name} = [${got.join(',')}], expected [${want.join(',')}]`);
    }
  } else if (payload.model === 'classifier') {
    const p = values(byName('PROBABILITIES'));
    const sum = p.reduce((s, v) => s + v, 0);
    if (p.length !== 10 || Math.abs(sum - 1) > 1e-3) fail(`PROBABILITIES has ${p.length} values summing to ${sum}`);
  }
}
