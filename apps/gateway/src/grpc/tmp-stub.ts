import { encodeHttpInferResponse } from '@nvcf/protocol';
import { startGatewayGrpcServer } from '/work/main/apps/gateway/src/grpc/index.ts';
import { grpcClient, int32Bytes } from '/work/main/apps/gateway/src/grpc/grpc-test-fixture.ts';
const out = encodeHttpInferResponse({ model_name: 'simple', model_version: '1', outputs: [
  { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) },
  { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) }] }, { binaryDataOutput: true });
const fv = { id: '11111111-1111-4111-8111-111111111111', versionId: '22222222-2222-4222-8222-222222222222', model: { name: 'simple', version: '1', platform: 'x', inputs: [], outputs: [] } };
const deps: any = {
  auth: { authenticate: async () => ({ kind: 'api-key', subject: 'x', scopes: new Set(['invoke_function']) }) },
  functions: { resolve: async () => ({ fv, status: 'ACTIVE' }) },
  invocations: { invoke: async () => ({ kind: 'result', requestId: 'abc', result: { status: 200, contentType: out.contentType, body: out.body, headers: { 'inference-header-content-length': String(out.inferenceHeaderContentLength) } } }) },
};
const s = await startGatewayGrpcServer(deps, { host: '127.0.0.1', port: 0 });
const c = grpcClient(`127.0.0.1:${s.port}`);
const req = { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16] }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] }], raw_input_contents: [int32Bytes(Array(16).fill(1)), int32Bytes(Array(16).fill(3))] };
const md = { 'function-id': fv.id, authorization: 'Bearer x' };
for (let r = 0; r < 3; r++) { const t = performance.now(); for (let i = 0; i < 2000; i++) await c.call('ModelInfer', req, { metadata: md }); console.log(`${((performance.now() - t) / 2000).toFixed(3)} ms/call`); }
c.close(); await s.close();
