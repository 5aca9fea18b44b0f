import { createApiKeyStore } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys, createRequestStore } from '@nvcf/queue';
import { type CheckedResponse, fetchOpenApiValidator, type OpenApiValidator } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, createHarness, fnId, type Harness, simpleRequest, verId } from './harness.ts';

/**
 * The gateway answers as its own OpenAPI document says: real requests through a gateway, workers and Redis, each
 * answer checked against the document's operation for its path, method and status (headers, content type, JSON
 * body schema). The last test checks that every documented operation was reached.
 */
let h: Harness;
let gw: RunningGateway;
let openapi: OpenApiValidator;
const reached = new Set<string>();

beforeAll(async () => {
  h = await createHarness();
  await (await h.worker()).close(); // functions published; workers run only where a test starts one
  gw = await h.gateway();
  openapi = await fetchOpenApiValidator(gw.url);
});
afterAll(async () => {
  await h?.close();
});

interface Call {
  body?: unknown;
  headers?: Record<string, string>;
  /** A credential other than the admin key; null: none. */
  key?: string | null;
  base?: string;
}

/** Sends a request and checks its answer against the document; a plain object body goes as JSON. */
async function call(method: string, path: string, opts: Call = {}): Promise<CheckedResponse> {
  const auth = opts.key === null ? {} : opts.key ? { authorization: `Bearer ${opts.key}` } : adminAuth;
  const raw = typeof opts.body === 'string' || opts.body instanceof Uint8Array ? opts.body : undefined;
  const json = raw === undefined && opts.body !== undefined ? JSON.stringify(opts.body) : undefined;
  const body = raw ?? json;
  const res = await fetch(`${opts.base ?? gw.url}${path}`, {
    method,
    redirect: 'manual',
    headers: { ...auth, ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
    ...(body === undefined ? {} : { body }),
  });
  const checked = await openapi.response(method, res, { path: new URL(`${gw.url}${path}`).pathname });
  reached.add(checked.operation);
  return checked;
}

const expectStatus = (res: CheckedResponse, status: number) =>
  expect(res.status, `${res.operation}: ${res.text}`).toBe(status);
const simple = `/v2/nvcf/pexec/functions/${fnId('simple')}`;
const UNKNOWN = '00000000-0000-4000-8000-00000000dead';
const createBody = {
  name: 'contract-fn',
  inferenceUrl: '/v2/models/simple/infer',
  inferencePort: 8000,
  containerImage: 'nvcf/onnx-worker:latest',
  apiBodyFormat: 'PREDICT_V2',
  models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
  tags: ['contract'],
};
const deployBody = (maxInstances: number) => ({
  deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances }],
});

describe('the control plane', () => {
  it('health, functions, versions, metadata, deployments, queues', async () => {
    expectStatus(await call('GET', '/health', { key: null }), 200);
    expectStatus(await call('GET', '/v2/nvcf/functions'), 200);
    expectStatus(await call('GET', '/v2/nvcf/functions/ids'), 200);

    openapi.requestBody('POST', '/v2/nvcf/functions', createBody);
    const created = await call('POST', '/v2/nvcf/functions', { body: createBody });
    expectStatus(created, 200);
    const fn = (created.json as { function: { id: string; versionId: string } }).function;
    const second = await call('POST', `/v2/nvcf/functions/${fn.id}/versions`, { body: createBody });
    expectStatus(second, 200);
    const vid = (second.json as { function: { versionId: string } }).function.versionId;
    expectStatus(await call('GET', `/v2/nvcf/functions/${fn.id}/versions`), 200);
    expectStatus(await call('GET', `/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`), 200);
    // A container function: no model, its container fields returned.
    const containerBody = {
      name: 'contract-container',
      inferenceUrl: '/echo',
      inferencePort: 8000,
      health: { protocol: 'HTTP', uri: '/health', port: 8000, timeout: 'PT10S', expectedStatusCode: 200 },
      containerImage: 'nvcf/echo-server:dev',
      containerArgs: 'node server.ts',
      containerEnvironment: [{ key: 'A', value: 'b' }],
      secrets: [{ name: 'API_TOKEN', value: 'contract-secret' }],
    };
    openapi.requestBody('POST', '/v2/nvcf/functions', containerBody);
    const container = await call('POST', '/v2/nvcf/functions', { body: containerBody });
    expectStatus(container, 200);
    // Its secrets: replaced as a whole (NVCF's updateSecrets answers 200 with no body), named but never shown.
    const cfn = (container.json as { function: { id: string; versionId: string; secrets: string[] } }).function;
    expect(cfn.secrets).toEqual(['API_TOKEN']);
    expect(container.text).not.toContain('contract-secret');
    const secrets = `/v2/nvcf/secrets/functions/${cfn.id}/versions/${cfn.versionId}`;
    const newSecrets = {
      secrets: [
        { name: 'API_TOKEN', value: 'changed' },
        { name: 'OTHER', value: 'x' },
      ],
    };
    openapi.requestBody('PUT', secrets, newSecrets);
    expectStatus(await call('PUT', secrets, { body: newSecrets }), 200);
    const twice = {
      secrets: [
        { name: 'A', value: '1' },
        { name: 'A', value: '2' },
      ],
    };
    expectStatus(await call('PUT', secrets, { body: twice }), 400);
    expect(() => openapi.requestBody('PUT', secrets, { secrets: [{ name: 'bad-name', value: 'v' }] })).toThrow(
      /pattern/,
    );
    expectStatus(
      await call('PUT', `/v2/nvcf/secrets/functions/${cfn.id}/versions/${UNKNOWN}`, { body: newSecrets }),
      404,
    );
    const meta = { tags: ['a', 'b'], description: 'contract' };
    openapi.requestBody('PUT', `/v2/nvcf/metadata/functions/${fn.id}/versions/${fn.versionId}`, meta);
    expectStatus(
      await call('PUT', `/v2/nvcf/metadata/functions/${fn.id}/versions/${fn.versionId}`, { body: meta }),
      200,
    );

    const deployment = `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`;
    openapi.requestBody('POST', deployment, deployBody(1));
    expectStatus(await call('POST', deployment, { body: deployBody(1) }), 200);
    expectStatus(await call('POST', deployment, { body: deployBody(1) }), 400); // already deployed
    expectStatus(await call('GET', deployment), 200);
    expectStatus(await call('PUT', deployment, { body: deployBody(2) }), 200);
    expectStatus(await call('DELETE', deployment), 200);

    expectStatus(await call('GET', `/v2/nvcf/queues/functions/${fnId('simple')}`), 200);
    expectStatus(await call('GET', `/v2/nvcf/queues/functions/${fnId('simple')}/versions/${verId('simple')}`), 200);
    expectStatus(await call('GET', `/v2/nvcf/queues/functions/${UNKNOWN}`), 404);
    const stats = `/v2/nvcf/stats/functions/${fnId('simple')}/versions`;
    expectStatus(await call('GET', `${stats}/${verId('simple')}`), 200);
    expectStatus(await call('GET', `${stats}/${UNKNOWN}`), 404);

    expectStatus(await call('DELETE', `/v2/nvcf/functions/${fn.id}/versions/${vid}`), 204);
    expectStatus(await call('GET', `/v2/nvcf/functions/${fn.id}/versions/${vid}`), 404);
  });

  it('refuses bad input with the documented problems', async () => {
    expectStatus(await call('POST', '/v2/nvcf/functions', { body: { ...createBody, name: '-bad' } }), 400);
    expectStatus(await call('POST', '/v2/nvcf/functions', { body: '{' }), 400);
    const helm = { name: 'helm', inferenceUrl: '/x', helmChart: 'c', helmChartServiceName: 's' };
    expectStatus(await call('POST', '/v2/nvcf/functions', { body: helm }), 400);
    expectStatus(await call('GET', '/v2/nvcf/functions/not-a-uuid/versions'), 400);
    expectStatus(await call('GET', `/v2/nvcf/functions/${UNKNOWN}/versions`), 404);
    const big = JSON.stringify({ ...createBody, description: 'x'.repeat(1024 * 1024) });
    expectStatus(await call('POST', '/v2/nvcf/functions', { body: big }), 413);
  });
});

describe('invocation', () => {
  it('answers 200 with the function’s answer, its events, and its refusals', async () => {
    const worker = await h.worker();
    try {
      expectStatus(await call('POST', simple, { body: simpleRequest() }), 200);
      expectStatus(await call('POST', `${simple}/versions/${verId('simple')}`, { body: simpleRequest() }), 200);
      const sse = await call('POST', simple, { body: simpleRequest(), headers: { accept: 'text/event-stream' } });
      expectStatus(sse, 200);
      expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(sse.text).toContain('data:');
      const refused = await call('POST', simple, {
        body: { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: Array(16).fill(0) }] },
      });
      expectStatus(refused, 400);
      expect(refused.headers.get('nvcf-status')).toBe('errored');
      expectStatus(
        await call('POST', simple, { body: simpleRequest(), headers: { 'nvcf-poll-seconds': 'soon' } }),
        400,
      );

      const exec = { requestHeader: { pollDurationSeconds: 30 }, requestBody: simpleRequest() };
      openapi.requestBody('POST', `/v2/nvcf/exec/functions/${fnId('simple')}`, exec);
      const envelope = await call('POST', `/v2/nvcf/exec/functions/${fnId('simple')}`, { body: exec });
      expectStatus(envelope, 200);
      expect(envelope.json).toMatchObject({ status: 'fulfilled' });
      const pinned = `/v2/nvcf/exec/functions/${fnId('simple')}/versions/${verId('simple')}`;
      expectStatus(await call('POST', pinned, { body: exec }), 200);
      expectStatus(await call('POST', pinned, { body: { requestHeader: { pollDurationSeconds: 'x' } } }), 400);
    } finally {
      await worker.close();
    }
  });

  it('queued: 202, progress, position, cancel 204/404/409, 499, idempotency 422', async () => {
    const waiting = await call('POST', simple, {
      body: simpleRequest(),
      headers: { 'nvcf-poll-seconds': '1', 'idempotency-key': 'contract-1' },
    });
    expectStatus(waiting, 202);
    expect(waiting.text).toBe('');
    const reqId = waiting.headers.get('nvcf-reqid') ?? '';
    const again = { 'nvcf-poll-seconds': '1', 'idempotency-key': 'contract-1' };
    expectStatus(await call('POST', simple, { body: simpleRequest({ id: 'other' }), headers: again }), 422);

    const status = `/v2/nvcf/pexec/status/${reqId}`;
    expectStatus(await call('GET', status, { headers: { 'nvcf-poll-seconds': '1' } }), 202);
    const store = createRequestStore(h.redis, createKeys(h.keyPrefix), { ttlSeconds: 600 });
    expect(await store.reportProgress(reqId, 42, Buffer.from(JSON.stringify({ step: 1 })))).toBe(true);
    const partial = await call('GET', status, { headers: { 'nvcf-poll-seconds': '1' } });
    expectStatus(partial, 202);
    expect(partial.json).toEqual({ step: 1 });
    expect(partial.headers.get('nvcf-percent-complete')).toBe('42');

    const position = await call('GET', `/v2/nvcf/queues/${reqId}/position`);
    expectStatus(position, 200);
    expect(position.json).toMatchObject({ functionId: fnId('simple'), functionVersionId: verId('simple') });
    expectStatus(await call('GET', `/v2/nvcf/queues/${UNKNOWN}/position`), 404);

    // A second queued request, through the envelope: cancelled, its envelope status read says so.
    const exec = await call('POST', `/v2/nvcf/exec/functions/${fnId('simple')}`, {
      body: { requestHeader: { pollDurationSeconds: 1 }, requestBody: simpleRequest() },
    });
    expectStatus(exec, 202);
    const execId = (exec.json as { reqId: string }).reqId;
    expectStatus(await call('GET', `/v2/nvcf/exec/status/${execId}`, { headers: { 'nvcf-poll-seconds': '1' } }), 202);
    expectStatus(await call('DELETE', `/v2/nvcf/pexec/status/${execId}`), 204);
    const cancelled = await call('GET', `/v2/nvcf/exec/status/${execId}`);
    expectStatus(cancelled, 499);
    expect(cancelled.json).toMatchObject({ status: 'errored', errorCode: 499 });

    // And one through pexec.
    const third = await call('POST', simple, { body: simpleRequest(), headers: { 'nvcf-poll-seconds': '1' } });
    const thirdId = third.headers.get('nvcf-reqid') ?? '';
    expectStatus(await call('DELETE', `/v2/nvcf/pexec/status/${thirdId}`), 204);
    expectStatus(await call('DELETE', `/v2/nvcf/pexec/status/${thirdId}`), 409);
    expectStatus(await call('GET', `/v2/nvcf/pexec/status/${thirdId}`), 499);
    expectStatus(await call('DELETE', `/v2/nvcf/pexec/status/${UNKNOWN}`), 404);
    expectStatus(await call('DELETE', '/v2/nvcf/pexec/status/not-a-uuid'), 400);
    expectStatus(await call('GET', `/v2/nvcf/pexec/status/${UNKNOWN}`), 404);

    // The first request is still queued: a worker answering large results turns its poll into a 302.
    const worker = await h.worker({ MAX_DIRECT_RESULT_BYTES: '64' });
    try {
      await largeResults(status);
    } finally {
      await worker.close();
    }
  });
});

/** With every result over the direct limit: 302 to a signed zip, and the envelope's `responseReference`. */
async function largeResults(queuedStatus: string): Promise<void> {
  const polled = await call('GET', queuedStatus, { headers: { 'nvcf-poll-seconds': '30' } });
  expectStatus(polled, 302);
  const redirected = await call('POST', simple, { body: simpleRequest() });
  expectStatus(redirected, 302);
  const location = new URL(redirected.headers.get('location') ?? '');
  const zip = await call('GET', `${location.pathname}${location.search}`, { key: null });
  expectStatus(zip, 200);
  expect(zip.headers.get('content-type')).toBe('application/zip');
  const tampered = location.search.replace(/signature=[^&]+/, 'signature=AAAA');
  expectStatus(await call('GET', `${location.pathname}${tampered}`, { key: null }), 403);
  const envelope = await call('POST', `/v2/nvcf/exec/functions/${fnId('simple')}`, {
    body: { requestHeader: { pollDurationSeconds: 30 }, requestBody: simpleRequest() },
  });
  expectStatus(envelope, 200);
  expect(envelope.json).toMatchObject({ status: 'fulfilled', percentComplete: 100 });
}

describe('assets and keys', () => {
  it('creates, uploads, lists, reads and deletes an asset', async () => {
    const body = { contentType: 'application/octet-stream', description: 'contract' };
    openapi.requestBody('POST', '/v2/nvcf/assets', body);
    const created = await call('POST', '/v2/nvcf/assets', { body });
    expectStatus(created, 200);
    const asset = created.json as { assetId: string; uploadUrl: string };
    const upload = new URL(asset.uploadUrl);
    const headers = { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'contract' };
    const path = `${upload.pathname}${upload.search}`;
    const bytes = new Uint8Array([1, 2, 3, 4]);
    expectStatus(await call('PUT', path, { key: null, headers, body: bytes }), 200);
    const wrongType = { ...headers, 'content-type': 'text/plain' };
    expectStatus(await call('PUT', path, { key: null, headers: wrongType, body: bytes }), 403);
    expectStatus(await call('GET', '/v2/nvcf/assets'), 200);
    expectStatus(await call('GET', `/v2/nvcf/assets/${asset.assetId}`), 200);
    expectStatus(await call('DELETE', `/v2/nvcf/assets/${asset.assetId}`), 204);
    expectStatus(await call('GET', `/v2/nvcf/assets/${asset.assetId}`), 404);
    expectStatus(await call('POST', '/v2/nvcf/assets', { body: { contentType: '' } }), 400);
  });

  it('lists, creates and revokes API keys', async () => {
    expectStatus(await call('GET', '/v2/nvcf/keys'), 200);
    const body = { name: 'contract', scopes: ['list_functions'] };
    openapi.requestBody('POST', '/v2/nvcf/keys', body);
    const created = await call('POST', '/v2/nvcf/keys', { body });
    expectStatus(created, 201);
    const { key, value } = created.json as { key: { id: string }; value: string };
    // The new key lists functions and is refused the rest (a missing scope: 403).
    expectStatus(await call('GET', '/v2/nvcf/functions', { key: value }), 200);
    expectStatus(await call('POST', simple, { key: value, body: simpleRequest() }), 403);
    expectStatus(await call('GET', '/v2/nvcf/keys', { key: value }), 403);
    expectStatus(await call('DELETE', `/v2/nvcf/keys/${key.id}`), 204);
    expectStatus(await call('DELETE', `/v2/nvcf/keys/${UNKNOWN}`), 404);
    expectStatus(await call('POST', '/v2/nvcf/keys', { body: { ...body, extra: 1 } }), 400);
  });
});

describe('authorized accounts', () => {
  it('shares a function with another account, adds, removes and deletes authorizations, as NVCF answers', async () => {
    const created = await call('POST', '/v2/nvcf/functions', { body: { ...createBody, name: 'contract-shared' } });
    const fn = (created.json as { function: { id: string; versionId: string } }).function;
    const all = `/v2/nvcf/authorizations/functions/${fn.id}`;
    const one = `${all}/versions/${fn.versionId}`;
    const party = (ncaId: string) => ({ authorizedParty: { ncaId } });

    expectStatus(await call('GET', all), 200);
    expectStatus(await call('GET', one), 200);
    // Nothing to add to yet (NVCF: 404), nor to remove from.
    expectStatus(await call('PATCH', `${all}/add`, { body: party('contract-b') }), 404);
    expectStatus(await call('PATCH', `${all}/remove`, { body: party('contract-b') }), 404);
    const body = { authorizedParties: [{ ncaId: 'contract-b' }] };
    openapi.requestBody('POST', all, body);
    const shared = await call('POST', all, { body });
    expectStatus(shared, 200);
    expect(shared.json).toEqual({
      function: { id: fn.id, ncaId: 'self-hosted', authorizedParties: body.authorizedParties },
    });
    openapi.requestBody('PATCH', `${all}/add`, party('contract-c'));
    expectStatus(await call('PATCH', `${all}/add`, { body: party('contract-c') }), 200);
    expectStatus(await call('PATCH', `${all}/add`, { body: party('contract-c') }), 409);
    expectStatus(await call('PATCH', `${all}/remove`, { body: party('contract-x') }), 400);
    expectStatus(await call('PATCH', `${all}/remove`, { body: party('contract-c') }), 200);

    expectStatus(await call('POST', one, { body: { authorizedParties: [{ ncaId: 'contract-d' }] } }), 200);
    expectStatus(await call('PATCH', `${one}/add`, { body: party('contract-e') }), 200);
    expectStatus(await call('PATCH', `${one}/remove`, { body: party('contract-e') }), 200);
    const cleared = await call('DELETE', one);
    expectStatus(cleared, 200);
    // The version keeps what it inherits.
    expect(cleared.json).toMatchObject({
      function: { versionId: fn.versionId, authorizedParties: body.authorizedParties },
    });
    expectStatus(await call('PATCH', `${one}/remove`, { body: party('contract-d') }), 404);

    // The account it is shared with sees it, and manages nothing of it.
    const b = await call('POST', '/v2/nvcf/keys', {
      body: { name: 'contract-b', scopes: ['list_functions', 'authorize_clients'], ncaId: 'contract-b' },
    });
    const bKey = (b.json as { value: string }).value;
    const listed = await call('GET', '/v2/nvcf/functions?visibility=authorized', { key: bKey });
    expectStatus(listed, 200);
    expect((listed.json as { functions: { id: string; ownedByDifferentAccount: boolean }[] }).functions).toEqual([
      expect.objectContaining({ id: fn.id, ownedByDifferentAccount: true }),
    ]);
    expectStatus(await call('GET', '/v2/nvcf/functions/ids?visibility=private', { key: bKey }), 200);
    expectStatus(await call('GET', all, { key: bKey }), 403);
    expectStatus(await call('GET', '/v2/nvcf/functions?visibility=everything'), 400);

    expectStatus(await call('POST', all, { body: { authorizedParties: [{ ncaId: 'two words' }] } }), 400);
    expectStatus(await call('PATCH', `${one}/add`, { body: { authorizedParty: {} } }), 400);
    expectStatus(await call('GET', `/v2/nvcf/authorizations/functions/${UNKNOWN}`), 404);
    expectStatus(await call('DELETE', `${all.replace(fn.id, UNKNOWN)}/versions/${fn.versionId}`), 404);
    const big = JSON.stringify({ authorizedParties: [{ ncaId: 'x'.repeat(1024 * 1024) }] });
    expectStatus(await call('POST', one, { body: big }), 413);
    const deleted = await call('DELETE', all);
    expectStatus(deleted, 200);
    expect(deleted.json).toEqual({ function: { id: fn.id, ncaId: 'self-hosted', authorizedParties: [] } });
  });
});

describe('cluster groups', () => {
  it('lists the pools of the live workers, with their GPUs and instance types', async () => {
    const worker = await h.worker({
      WORKER_POOL: 'contract-pool',
      WORKER_GPU: 'L40S',
      WORKER_INSTANCE_TYPE: 'gl40s.x1',
    });
    try {
      const listed = await call('GET', '/v2/nvcf/clusterGroups');
      expectStatus(listed, 200);
      const { clusterGroups } = listed.json as { clusterGroups: { name: string; gpus: unknown[] }[] };
      expect(clusterGroups.find((g) => g.name === 'contract-pool')?.gpus).toEqual([
        { name: 'L40S', instanceTypes: [{ name: 'gl40s.x1', description: 'L40S worker (gl40s.x1)', default: true }] },
      ]);
    } finally {
      await worker.close();
    }
    // A stopped worker's pool is gone at once.
    const after = (await call('GET', '/v2/nvcf/clusterGroups')).json as { clusterGroups: { name: string }[] };
    expect(after.clusterGroups.map((g) => g.name)).not.toContain('contract-pool');
  });
});

describe('credentials and limits', () => {
  it('401 without a credential, 429 over the rate', async () => {
    const unauthorized = await call('GET', '/v2/nvcf/functions', { key: null });
    expectStatus(unauthorized, 401);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');
    expectStatus(await call('GET', '/v2/nvcf/assets', { key: 'nvapi-unknown' }), 401);

    const limited = await h.gateway({ RATE_LIMIT_PER_MINUTE: '1' });
    const store = createApiKeyStore(h.redis, createKeys(h.keyPrefix));
    const { key } = await store.create({ name: 'limited', scopes: ['invoke_function'] });
    // Windows are whole minutes: both calls must fall in one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 57_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
    const poll = `/v2/nvcf/pexec/status/${UNKNOWN}`;
    expectStatus(await call('GET', poll, { key, base: limited.url }), 404);
    const refused = await call('GET', poll, { key, base: limited.url });
    expectStatus(refused, 429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('coverage', () => {
  it('every documented operation was reached above', () => {
    const documented = Object.entries(openapi.document.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.filter((op) => !reached.has(op))).toEqual([]);
  });
});
