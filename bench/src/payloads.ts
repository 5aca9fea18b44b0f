import { parseInferRequest, type Tensor } from '@nvcf/protocol';

/** The request each model is benchmarked with, as the client sends it and as the runner receives it. */
export interface Payload {
  model: string;
  /** KServe V2 JSON infer request body, parsed. */
  body: { inputs: { name: string; datatype: string; shape: number[]; data: number[] }[] };
  /** `body` serialised once: what goes over HTTP. */
  json: Buffer;
  /** `body` decoded once into typed tensors: what `LoadedModel.run` takes. */
  tensors: Tensor[];
  /** Output names a correct answer carries. */
  outputs: string[];
}

const BODIES: Record<string, { body: Payload['body']; outputs: string[] }> = {
  // Triton's simple client request: INPUT0 = 0..15, INPUT1 = ones.
  simple: {
    body: {
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
      ],
    },
    outputs: ['OUTPUT0', 'OUTPUT1'],
  },
  // An MNIST-sized image: 784 pixels in [0, 1] with three decimals, as a client would send them.
  classifier: {
    body: {
      inputs: [
        {
          name: 'INPUT',
          datatype: 'FP32',
          shape: [1, 784],
          data: Array.from({ length: 784 }, (_, i) => Math.round(((i * 37) % 256) / 0.255) / 1000),
        },
      ],
    },
    outputs: ['PROBABILITIES'],
  },
};

export function payloadFor(model: string): Payload {
  const entry = BODIES[model];
  if (!entry) throw new Error(`no benchmark payload for model '${model}' (known: ${Object.keys(BODIES).join(', ')})`);
  return {
    model,
    body: entry.body,
    json: Buffer.from(JSON.stringify(entry.body)),
    tensors: parseInferRequest(entry.body).inputs,
    outputs: entry.outputs,
  };
}
