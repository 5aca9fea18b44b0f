import { decodeHttpInferResponse, encodeHttpInferRequest } from '@nvcf/protocol';
import type { ComputeVariant } from './compute-models.ts';
import type { HttpClient } from './http-client.ts';
import type { HttpRequestSpec } from './kserve-requests.ts';

const INPUT_SHAPE = [1, 3, 224, 224];
const CLASSES = 1000;

/** One image of batch 1 (values in [0, 1)), every input binary and the output asked for binary. */
export function densenetRequest(): HttpRequestSpec {
  const data = new Float32Array(INPUT_SHAPE.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = ((i * 37) % 256) / 256;
  const encoded = encodeHttpInferRequest(
    { inputs: [{ name: 'data_0', datatype: 'FP32', shape: INPUT_SHAPE, data }] },
    { binaryInputs: true, binaryDataOutput: true },
  );
  return {
    body: encoded.body,
    headers: {
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(encoded.inferenceHeaderContentLength),
    },
  };
}

/**
 * Sends the request once: `fc6_1` must be FP32 [1,1000], a softmax (sums to 1), and the same answer as the
 * variants checked before it (one model.onnx under every name). Returns the answer for the next check.
 */
export async function checkVariant(
  client: HttpClient,
  v: ComputeVariant,
  request: HttpRequestSpec,
  reference: Float32Array | undefined,
): Promise<Float32Array> {
  const res = await client.request('POST', `/v2/models/${v.name}/infer`, request.body, request.headers);
  if (res.status !== 200) throw new Error(`${v.name}: HTTP ${res.status} ${res.body.toString().slice(0, 200)}`);
  const header = res.headers['inference-header-content-length'];
  const out = decodeHttpInferResponse(res.body, typeof header === 'string' ? header : undefined).outputs;
  const probs = out.find((o) => o.name === 'fc6_1');
  if (probs?.datatype !== 'FP32' || !(probs.data instanceof Float32Array)) {
    throw new Error(`${v.name}: no FP32 output fc6_1 (got ${out.map((o) => `${o.name} ${o.datatype}`).join(', ')})`);
  }
  if (probs.shape.join() !== `1,${CLASSES}`)
    throw new Error(`${v.name}: fc6_1 shape [${probs.shape}], expected [1,${CLASSES}]`);
  const sum = probs.data.reduce((s, x) => s + x, 0);
  if (Math.abs(sum - 1) > 1e-3) throw new Error(`${v.name}: fc6_1 sums to ${sum}, not a softmax`);
  const diff = reference ? Math.max(...probs.data.map((x, i) => Math.abs(x - (reference[i] ?? Number.NaN)))) : 0;
  if (!(diff <= 1e-5)) throw new Error(`${v.name}: fc6_1 differs from the first variant's by ${diff}`);
  return probs.data;
}
