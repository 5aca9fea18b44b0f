import { encodeHttpInferRequest } from '@nvcf/protocol';
import { afterAll, beforeAll, it } from 'vitest';
import { createHarness, fnId, gfetch, type Harness, ADMIN_KEY } from '../e2e/harness.ts';
import { startGatewayGrpcFixture, int32Bytes, type GatewayGrpcFixture } from './grpc-test-fixture.ts';
let h: Harness; let fx: GatewayGrpcFixture; let url: string;
beforeAll(async () => { h = await createHarness(); await h.worker(); url = (await h.gateway()).url; fx = await startGatewayGrpcFixture(h); });
afterAll(async () => { await fx.close(); await h.close(); });
it('compare', async () => {
  const enc = encodeHttpInferRequest({ inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(3) }] }, { binaryInputs: true, binaryDataOutput: true });
  const req = { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16] }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] }], raw_input_contents: [int32Bytes(Array.from({length:16},(_, i)=>i)), int32Bytes(Array(16).fill(3))] };
  const md = { 'function-id': fnId('simple'), authorization: `Bearer ${ADMIN_KEY}` };
  for (let round = 0; round < 3; round++) {
    let t = performance.now();
    for (let i = 0; i < 200; i++) { const r = await gfetch(`${url}/v2/nvcf/pexec/functions/${fnId('simple')}`, { method: 'POST', headers: { 'inference-header-content-length': String(enc.inferenceHeaderContentLength) }, body: enc.body }); await r.arrayBuffer(); if (r.status !== 200) throw new Error(String(r.status)); }
    const p = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < 200; i++) await fx.client.call('ModelInfer', req, { metadata: md });
    const g = performance.now() - t;
    console.info(`round ${round}: pexec ${(p/200).toFixed(2)} ms/call, grpc ${(g/200).toFixed(2)} ms/call`);
  }
});
