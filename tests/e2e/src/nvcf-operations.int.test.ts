import type { RunningGateway } from '@nvcf/gateway';
import { type CheckedResponse, fetchOpenApiValidator, type OpenApiValidator } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createHarness, type Harness, simpleRequest } from './harness.ts';

/**
 * Every operation of NVIDIA's published NVCF API ("Cloud Functions" OpenAPI document 2.124.1, the contract NVIDIA's
 * generated SDKs and NGC's CLI are built from), walked as a new user would: each called with a body valid under
 * NVIDIA's schema, answered with the status NVIDIA lists for it and a body carrying every field NVIDIA marks
 * required — and matching this gateway's own OpenAPI document, which must describe the operation. The list below
 * restates NVIDIA's document in this project's words (operation, success statuses, required response fields); the
 * README's "NVCF compatibility" table is the same list for users.
 */

interface NvcfOperation {
  /** NVIDIA's operationId. */
  id: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** NVIDIA's path template (parameter names as NVIDIA spells them). */
  path: string;
  /** The success statuses NVIDIA lists. */
  ok: number[];
}

const FN = '/v2/nvcf/functions';
const VERSION = '{functionId}/versions/{functionVersionId}';
const AUTH_ALL = '/v2/nvcf/authorizations/functions/{functionId}';
const AUTH_VERSION = `${AUTH_ALL}/versions/{functionVersionId}`;
const DEPLOYMENT = `/v2/nvcf/deployments/functions/${VERSION}`;
const op = (id: string, method: NvcfOperation['method'], path: string, ok = [200]): NvcfOperation => ({
  id,
  method,
  path,
  ok,
});

/** NVIDIA's operations, less `getClientDetails` (NGC's cross-account client registry: not part of a self-hosted NVCF). */
const NVCF_OPERATIONS: NvcfOperation[] = [
  op('getHealth', 'GET', '/health'),
  op('getFunctions_1', 'GET', FN),
  op('createFunction_1', 'POST', FN),
  op('getFunctionIds', 'GET', `${FN}/ids`),
  op('getFunctions', 'GET', `${FN}/{functionId}/versions`),
  op('createFunction', 'POST', `${FN}/{functionId}/versions`),
  op('getFunction', 'GET', `${FN}/${VERSION}`),
  op('deleteFunction', 'DELETE', `${FN}/${VERSION}`, [204]),
  op('updateFunctionMetadata', 'PUT', `/v2/nvcf/metadata/functions/${VERSION}`),
  op('updateSecrets', 'PUT', '/v2/nvcf/secrets/functions/{functionId}/versions/{versionId}'),
  op('createFunctionDeployment', 'POST', DEPLOYMENT),
  op('getFunctionDeployment', 'GET', DEPLOYMENT),
  op('updateFunctionDeployment', 'PUT', DEPLOYMENT),
  op('deleteFunctionDeployment', 'DELETE', DEPLOYMENT),
  op('invokeFunctionStreaming_2', 'POST', '/v2/nvcf/pexec/functions/{functionId}', [200, 202]),
  op('invokeFunctionStreaming_1_1', 'POST', '/v2/nvcf/pexec/functions/{functionId}/versions/{versionId}', [200, 202]),
  op('getFunctionInvocationResult', 'GET', '/v2/nvcf/pexec/status/{requestId}', [200, 202]),
  op('invokeFunction', 'POST', '/v2/nvcf/exec/functions/{functionId}', [200, 202]),
  op('invokeFunction_1', 'POST', '/v2/nvcf/exec/functions/{functionId}/versions/{versionId}', [200, 202]),
  op('getFunctionInvocationResult_1', 'GET', '/v2/nvcf/exec/status/{requestId}', [200, 202]),
  op('getQueuesDetails_1', 'GET', '/v2/nvcf/queues/functions/{functionId}'),
  op('getQueuesDetails', 'GET', '/v2/nvcf/queues/functions/{functionId}/versions/{versionId}'),
  op('getPositionInQueue', 'GET', '/v2/nvcf/queues/{requestId}/position'),
  op('getAssets', 'GET', '/v2/nvcf/assets'),
  op('createAsset', 'POST', '/v2/nvcf/assets'),
  op('getAsset', 'GET', '/v2/nvcf/assets/{assetId}'),
  op('deleteAsset', 'DELETE', '/v2/nvcf/assets/{assetId}', [204]),
  op('getClusterGroups', 'GET', '/v2/nvcf/clusterGroups'),
  op('getAuthorizedPartiesForAllVersions', 'GET', AUTH_ALL),
  op('createAuthorizedPartiesForAllVersions', 'POST', AUTH_ALL),
  op('deleteAuthorizedPartiesForAllVersions', 'DELETE', AUTH_ALL),
  op('addAuthorizedPartyForAllVersions', 'PATCH', `${AUTH_ALL}/add`),
  op('removeAuthorizedPartyForAllVersions', 'PATCH', `${AUTH_ALL}/remove`),
  op('getAuthorizedPartiesForSpecificVersion', 'GET', AUTH_VERSION),
  op('createAuthorizedPartiesForSpecificVersion', 'POST', AUTH_VERSION),
  op('deleteAuthorizedPartiesForSpecificVersion', 'DELETE', AUTH_VERSION),
  op('addAuthorizedPartyForSpecificVersion', 'PATCH', `${AUTH_VERSION}/add`),
  op('removeAuthorizedPartyForSpecificVersion', 'PATCH', `${AUTH_VERSION}/remove`),
];

/** The fields NVIDIA's DTOs mark required, by DTO. */
const REQUIRED = {
  FunctionDto: ['id', 'versionId', 'name', 'ncaId', 'status', 'createdAt', 'functionType', 'healthUri'],
  FunctionDeploymentDto: [
    'functionId',
    'functionVersionId',
    'functionName',
    'ncaId',
    'functionStatus',
    'deploymentSpecifications',
    'createdAt',
  ],
  GpuSpecificationDto: ['gpu', 'instanceType', 'minInstances', 'maxInstances'],
  AuthorizedPartiesByFunctionDto: ['id', 'ncaId'],
  QueueDto: ['functionVersionId', 'functionName', 'functionStatus'],
} as const;
/** NVIDIA's FunctionDto and FunctionDeploymentDto status values. */
const FUNCTION_STATUSES = ['ACTIVE', 'DEPLOYING', 'ERROR', 'INACTIVE', 'DELETED'];

let h: Harness;
let gw: RunningGateway;
let openapi: OpenApiValidator;
/** `METHOD template` of every NVIDIA operation answered with one of its success statuses. */
const walked = new Set<string>();

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // the repository's functions published; a worker runs where a step starts one
  gw = await h.gateway();
  openapi = await fetchOpenApiValidator(gw.url);
});
afterAll(async () => {
  await h?.close();
});

/** The template NVIDIA's path `path` falls under, parameters named as NVIDIA names them. */
function nvcfOperation(method: string, path: string): NvcfOperation {
  const found = NVCF_OPERATIONS.find(
    (o) =>
      o.method === method &&
      new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(new URL(path, 'http://x').pathname),
  );
  if (!found) throw new Error(`${method} ${path} is not an NVCF operation`);
  return found;
}

/** Calls an NVCF operation with a body valid under NVIDIA's schema; the answer must be one of its success statuses. */
async function walk(
  method: NvcfOperation['method'],
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<CheckedResponse> {
  const operation = nvcfOperation(method, path);
  const res = await fetch(`${gw.url}${path}`, {
    method,
    redirect: 'manual',
    headers: { ...adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // Our own document describes it, and the answer matches it (status, headers, body schema).
  const checked = await openapi.response(method, res);
  expect(operation.ok, `${operation.id} (${method} ${path}) answered ${checked.status}: ${checked.text}`).toContain(
    checked.status,
  );
  walked.add(`${operation.method} ${operation.path}`);
  return checked;
}

function expectFields(value: unknown, dto: keyof typeof REQUIRED, where: string): void {
  expect(value, where).toBeTypeOf('object');
  for (const field of REQUIRED[dto]) expect(value, `${where}: ${dto}.${field}`).toHaveProperty(field);
}
const fieldOf = (value: unknown, key: string): unknown => (value as Record<string, unknown>)[key];

function expectFunction(value: unknown, where: string) {
  expectFields(value, 'FunctionDto', where);
  expect(FUNCTION_STATUSES, `${where}: status`).toContain(fieldOf(value, 'status'));
}
function expectDeployment(json: unknown, where: string) {
  const deployment = fieldOf(json, 'deployment');
  expectFields(deployment, 'FunctionDeploymentDto', where);
  expect(FUNCTION_STATUSES, `${where}: functionStatus`).toContain(fieldOf(deployment, 'functionStatus'));
  for (const spec of fieldOf(deployment, 'deploymentSpecifications') as unknown[])
    expectFields(spec, 'GpuSpecificationDto', where);
}
function expectAuthorized(json: unknown, where: string, parties: string[]) {
  const fn = fieldOf(json, 'function');
  expectFields(fn, 'AuthorizedPartiesByFunctionDto', where);
  const listed = ((fieldOf(fn, 'authorizedParties') as { ncaId: string }[] | undefined) ?? []).map((p) => p.ncaId);
  expect(listed.sort(), where).toEqual([...parties].sort());
}

describe("NVIDIA's NVCF API, operation by operation", () => {
  it('every operation answers as NVIDIA documents it', async () => {
    expect((await walk('GET', '/health')).status).toBe(200);
    expect(fieldOf((await walk('GET', '/v2/nvcf/clusterGroups')).json, 'clusterGroups')).toBeInstanceOf(Array);

    // Functions: NVIDIA's create request (a model function names its ONNX model in `models`).
    const create = {
      name: 'walk-fn',
      inferenceUrl: '/v2/models/simple/infer',
      inferencePort: 8000,
      containerImage: 'nvcf/onnx-worker:latest',
      apiBodyFormat: 'PREDICT_V2',
      functionType: 'DEFAULT',
      models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
      tags: ['walk'],
      description: 'walked',
    };
    const created = await walk('POST', FN, create);
    const fn = fieldOf(created.json, 'function') as { id: string; versionId: string };
    expectFunction(fn, 'createFunction_1');
    const second = await walk('POST', `${FN}/${fn.id}/versions`, create);
    const vid2 = (fieldOf(second.json, 'function') as { versionId: string }).versionId;
    expectFunction(fieldOf(second.json, 'function'), 'createFunction');
    for (const listed of fieldOf((await walk('GET', FN)).json, 'functions') as unknown[])
      expectFunction(listed, 'getFunctions_1');
    expect(fieldOf((await walk('GET', `${FN}/ids`)).json, 'functionIds')).toContain(fn.id);
    const versions = fieldOf((await walk('GET', `${FN}/${fn.id}/versions`)).json, 'functions') as unknown[];
    expect(versions).toHaveLength(2);
    for (const v of versions) expectFunction(v, 'getFunctions');
    expectFunction(
      fieldOf((await walk('GET', `${FN}/${fn.id}/versions/${fn.versionId}`)).json, 'function'),
      'getFunction',
    );
    const metadata = await walk('PUT', `/v2/nvcf/metadata/functions/${fn.id}/versions/${fn.versionId}`, {
      tags: ['walk', 'more'],
    });
    expectFunction(fieldOf(metadata.json, 'function'), 'updateFunctionMetadata');
    expect(fieldOf(fieldOf(metadata.json, 'function'), 'tags')).toEqual(['walk', 'more']);

    // Secrets, on a container function (NVIDIA's container-shaped create request): the whole set replaced, and
    // no read shows a value.
    const container = await walk('POST', FN, {
      name: 'walk-container',
      inferenceUrl: '/echo',
      inferencePort: 8000,
      health: { protocol: 'HTTP', uri: '/health', port: 8000, timeout: 'PT10S', expectedStatusCode: 200 },
      containerImage: 'nvcf/echo-server:dev',
      containerArgs: 'node server.ts',
      containerEnvironment: [{ key: 'MODE', value: 'walk' }],
      secrets: [{ name: 'WALK_TOKEN', value: 'walk-secret-first' }],
    });
    const cfn = fieldOf(container.json, 'function') as { id: string; versionId: string };
    expectFunction(cfn, 'createFunction_1 (container)');
    const cpath = `${cfn.id}/versions/${cfn.versionId}`;
    await walk('PUT', `/v2/nvcf/secrets/functions/${cpath}`, {
      secrets: [{ name: 'WALK_TOKEN', value: 'walk-secret-value' }],
    });
    const read = await walk('GET', `${FN}/${cpath}`);
    expect(fieldOf(fieldOf(read.json, 'function'), 'secrets')).toEqual(['WALK_TOKEN']);
    expect(read.text).not.toContain('walk-secret');
    const unnamed = await walk('GET', `${FN}/${cpath}?includeSecrets=false`);
    expect(fieldOf(unnamed.json, 'function')).not.toHaveProperty('secrets');
    await walk('DELETE', `${FN}/${cpath}`);

    // Deployments.
    const deployment = `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`;
    const spec = { gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 1, maxRequestConcurrency: 2 };
    expectDeployment((await walk('POST', deployment, { deploymentSpecifications: [spec] })).json, 'create deployment');
    expectDeployment((await walk('GET', deployment)).json, 'getFunctionDeployment');
    const update = { deploymentSpecifications: [{ ...spec, maxInstances: 2 }] };
    expectDeployment((await walk('PUT', deployment, update)).json, 'updateFunctionDeployment');

    // Queues and invocation, on the deployed version (no worker yet: the request waits, 202).
    const queues = (await walk('GET', `/v2/nvcf/queues/functions/${fn.id}`)).json;
    expect(fieldOf(queues, 'functionId')).toBe(fn.id);
    for (const q of fieldOf(queues, 'queues') as unknown[]) expectFields(q, 'QueueDto', 'getQueuesDetails_1');
    const queue = (await walk('GET', `/v2/nvcf/queues/functions/${fn.id}/versions/${fn.versionId}`)).json;
    for (const q of fieldOf(queue, 'queues') as unknown[]) expectFields(q, 'QueueDto', 'getQueuesDetails');
    const pexecPath = `/v2/nvcf/pexec/functions/${fn.id}`;
    const waiting = await walk('POST', pexecPath, simpleRequest(), { 'nvcf-poll-seconds': '1' });
    expect(waiting.status).toBe(202);
    const reqId = waiting.headers.get('nvcf-reqid') ?? '';
    const position = (await walk('GET', `/v2/nvcf/queues/${reqId}/position`)).json;
    expect(position).toMatchObject({ functionId: fn.id, functionVersionId: fn.versionId });

    const worker = await h.worker();
    try {
      const statusPath = `/v2/nvcf/pexec/status/${reqId}`;
      const answered = await walk('GET', statusPath);
      expect(answered.status).toBe(200);
      expect(answered.json).toMatchObject({ model_name: 'simple' });
      const pinned = await walk('POST', `${pexecPath}/versions/${fn.versionId}`, simpleRequest());
      expect(pinned.status).toBe(200);
      // The exec envelope (InvokeFunctionRequest: `requestBody` required).
      const envelope = { requestHeader: { pollDurationSeconds: 30 }, requestBody: simpleRequest() };
      expect((await walk('POST', `/v2/nvcf/exec/functions/${fn.id}`, envelope)).json).toMatchObject({
        status: 'fulfilled',
      });
    } finally {
      await worker.close();
    }
    // No worker now: an envelope request waits, and its status read is a 202 NVIDIA lists.
    const waitingExec = await walk('POST', `/v2/nvcf/exec/functions/${fn.id}/versions/${fn.versionId}`, {
      requestBody: simpleRequest(),
      requestHeader: { pollDurationSeconds: 1 },
    });
    expect(waitingExec.status).toBe(202);
    const execId = fieldOf(waitingExec.json, 'reqId') as string;
    expect((await walk('GET', `/v2/nvcf/exec/status/${execId}`, undefined, { 'nvcf-poll-seconds': '1' })).status).toBe(
      202,
    );

    // Assets (CreateAssetRequest: contentType and description required).
    const asset = (await walk('POST', '/v2/nvcf/assets', { contentType: 'image/png', description: 'walk' })).json;
    const assetId = fieldOf(asset, 'assetId') as string;
    expect(fieldOf(asset, 'uploadUrl')).toBeTypeOf('string');
    expect(JSON.stringify((await walk('GET', '/v2/nvcf/assets')).json)).toContain(assetId);
    expect(fieldOf(fieldOf((await walk('GET', `/v2/nvcf/assets/${assetId}`)).json, 'asset'), 'assetId')).toBe(assetId);
    await walk('DELETE', `/v2/nvcf/assets/${assetId}`);

    // Sharing with other accounts, for every version and for one.
    const all = `/v2/nvcf/authorizations/functions/${fn.id}`;
    const one = `${all}/versions/${fn.versionId}`;
    const parties = (...ids: string[]) => ({ authorizedParties: ids.map((ncaId) => ({ ncaId })) });
    expectAuthorized((await walk('POST', all, parties('walk-a', 'walk-b'))).json, 'createForAllVersions', [
      'walk-a',
      'walk-b',
    ]);
    const listed = fieldOf((await walk('GET', all)).json, 'functions') as unknown[];
    for (const f of listed) expectFields(f, 'AuthorizedPartiesByFunctionDto', 'getForAllVersions');
    const party = (ncaId: string) => ({ authorizedParty: { ncaId } });
    expectAuthorized((await walk('PATCH', `${all}/add`, party('walk-c'))).json, 'addForAllVersions', [
      'walk-a',
      'walk-b',
      'walk-c',
    ]);
    expectAuthorized((await walk('PATCH', `${all}/remove`, party('walk-a'))).json, 'removeForAllVersions', [
      'walk-b',
      'walk-c',
    ]);
    // A version's answers list its own accounts and those it inherits from the function (as NVIDIA documents).
    const inherited = ['walk-b', 'walk-c'];
    expectAuthorized((await walk('POST', one, parties('walk-v'))).json, 'createForSpecificVersion', [
      ...inherited,
      'walk-v',
    ]);
    const versionRead = (await walk('GET', one)).json;
    expectFields(fieldOf(versionRead, 'function'), 'AuthorizedPartiesByFunctionDto', 'getForSpecificVersion');
    expect(fieldOf(fieldOf(versionRead, 'function'), 'versionId')).toBe(fn.versionId);
    expectAuthorized((await walk('PATCH', `${one}/add`, party('walk-w'))).json, 'addForSpecificVersion', [
      ...inherited,
      'walk-v',
      'walk-w',
    ]);
    expectAuthorized((await walk('PATCH', `${one}/remove`, party('walk-v'))).json, 'removeForSpecificVersion', [
      ...inherited,
      'walk-w',
    ]);
    // Deleting a version's own accounts leaves those it inherits.
    expectAuthorized((await walk('DELETE', one)).json, 'deleteForSpecificVersion', inherited);
    expectAuthorized((await walk('DELETE', all)).json, 'deleteForAllVersions', []);

    // Undeploy, then delete both versions.
    expectFunction(fieldOf((await walk('DELETE', deployment)).json, 'function'), 'deleteFunctionDeployment');
    expect((await walk('DELETE', `${FN}/${fn.id}/versions/${vid2}`)).text).toBe('');
    await walk('DELETE', `${FN}/${fn.id}/versions/${fn.versionId}`);
  });

  it('every NVCF operation was walked, and the gateway documents each', () => {
    const documented = new Set(
      Object.entries(openapi.document.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`),
      ),
    );
    const missing = NVCF_OPERATIONS.filter((o) => !documented.has(`${o.method} ${o.path.replace(/\{[^}]+\}/g, '{}')}`));
    expect(missing.map((o) => o.id)).toEqual([]);
    expect(NVCF_OPERATIONS.filter((o) => !walked.has(`${o.method} ${o.path}`)).map((o) => o.id)).toEqual([]);
  });

  it("NGC's client registry (getClientDetails) is not served: a 404 problem", async () => {
    const res = await fetch(`${gw.url}/v2/nvcf/clients/some-client`, { headers: adminAuth });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await res.text();
  });
});
