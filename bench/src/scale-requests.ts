import { decodeHttpInferResponse } from '@nvcf/protocol';
import { modelFunctionId } from '@nvcf/worker';
import { densenetRequest } from './compute-check.ts';
import type { HttpClient } from './http-client.ts';
import type { HttpRequestSpec } from './kserve-requests.ts';
import { payloadFor } from './payloads.ts';

/** One model's pexec request as every iteration sends it, and the output a correct answer carries. */
export interface ScaleRequest extends HttpRequestSpec {
  model: string;
  path: string;
  output: string;
}

/**
 * `densenet_onnx`: one 224×224 image as a tritonclient would send it (binary tensor data extension, ~590 KB),
 * the answer asked for binary; any `pnpm bench` model: its KServe V2 JSON body.
 */
export function scaleRequest(model: string, pollSeconds: number): ScaleRequest {
  const path = `/v2/nvcf/pexec/functions/${modelFunctionId(model)}`;
  const poll = { 'nvcf-poll-seconds': String(pollSeconds) };
  if (model === 'densenet_onnx') {
    const r = densenetRequest();
    return { model, path, body: r.body, headers: { ...r.headers, ...poll }, output: 'fc6_1' };
  }
  const p = payloadFor(model);
  const output = p.outputs[0];
  if (!output) throw new Error(`${model}: its benchmark payload names no output`);
  return { model, path, body: p.json, headers: { 'content-type': 'application/json', ...poll }, output };
}

/** Sends the request once, outside any timing: a 200 carrying the expected output, whichever body form. */
/** Checks one answer; resolves to its body's size (what a worker hands the gateway through Redis). */
export async function checkScaleAnswer(client: HttpClient, r: ScaleRequest): Promise<number> {
  const res = await client.request('POST', r.path, r.body, r.headers);
  if (res.status !== 200) throw new Error(`pexec ${r.model}: HTTP ${res.status} ${res.body.toString().slice(0, 300)}`);
  const header = res.headers['inference-header-content-length'];
  const { outputs } = decodeHttpInferResponse(res.body, typeof header === 'string' ? header : undefined);
  if (!outputs.some((o) => o.name === r.output)) {
    throw new Error(`pexec ${r.model}: no output ${r.output} (got ${outputs.map((o) => o.name).join(', ')})`);
  }
  return res.body.byteLength;
}
