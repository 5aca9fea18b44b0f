import type { CreateFunctionRequest, DeploymentSpecification } from '@nvcf/client';
import { NvcfClient, NvcfError } from '@nvcf/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness } from '../harness.ts';

let h: Harness;
let nvcf: NvcfClient;
let gatewayUrl: string;

beforeAll(async () => {
  h = await createHarness();
  // Publishes the repository's models (what a new function may serve), then leaves: no worker runs until a test
  // starts one, so a test can watch requests wait in a queue.
  await (await h.worker()).close();
  gatewayUrl = (await h.gateway()).url;
  nvcf = new NvcfClient({ baseUrl: gatewayUrl, apiKey: ADMIN_KEY });
});
afterAll(async () => {
  await h?.close();
});

const createBody = (name: string): CreateFunctionRequest => ({
  name,
  inferenceUrl: '/v2/models/simple/infer',
  inferencePort: 8000,
  containerImage: 'nvcf/onnx-worker:latest',
  apiBodyFormat: 'PREDICT_V2',
  models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
  tags: ['sdk'],
});
const deployBody = (over: Partial<DeploymentSpecification> = {}) => ({
  deploymentSpecifications: [
    { gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 2, maxRequestConcurrency: 2, ...over },
  ],
});
const simpleBody = {
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
  ],
};
interface Outputs {
  outputs: { name: string; data: number[] }[];
}
const output = (answer: { json<T>(): T }, name: string) =>
  answer.json<Outputs>().outputs.find((o) => o.name === name)?.data;

/** The NvcfError a call rejects with (fails the test when it resolves or throws something else). */
async function refusal(call: Promise<unknown>): Promise<NvcfError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NvcfError);
  return err as NvcfError;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** INT32 values in the binary tensor layout (little-endian), as an input asset holds them. */
function int32Bytes(values: number[]): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => {
    view.setInt32(i * 4, v, true);
  });
  return bytes;
}

describe('functions', () => {
  it('creates a function and a version, lists and reads them, changes metadata, deletes versions', async () => {
    const fn = await nvcf.functions.create(createBody('sdk-functions'));
    expect(fn).toMatchObject({
      name: 'sdk-functions',
      status: 'INACTIVE',
      apiBodyFormat: 'PREDICT_V2',
      functionType: 'DEFAULT',
      tags: ['sdk'],
      containerImage: 'nvcf/onnx-worker:latest',
      inferencePort: 8000,
      activeInstances: [],
    });
    expect(fn.model?.inputs).toEqual([
      { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
      { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
    ]);

    const v2 = await nvcf.functions.createVersion(fn.id, createBody('sdk-functions'));
    expect(v2.id).toBe(fn.id);
    expect(v2.versionId).not.toBe(fn.versionId);
    expect((await nvcf.functions.listVersions(fn.id)).map((v) => v.versionId)).toEqual([fn.versionId, v2.versionId]);
    expect(await nvcf.functions.getVersion(fn.id, v2.versionId)).toEqual(v2);
    const all = await nvcf.functions.list();
    expect(all.filter((f) => f.id === fn.id).map((f) => f.versionId)).toEqual(
      expect.arrayContaining([fn.versionId, v2.versionId]),
    );
    expect(all.find((f) => f.id === fnId('simple'))?.name).toBe('simple');
    const ids = await nvcf.functions.listIds();
    expect(ids).toEqual(expect.arrayContaining([fn.id, fnId('simple')]));
    expect(new Set(ids).size).toBe(ids.length);

    const changed = await nvcf.functions.updateMetadata(fn.id, fn.versionId, { tags: ['a', 'b'], description: 'd' });
    expect(changed).toMatchObject({ versionId: fn.versionId, tags: ['a', 'b'], description: 'd' });
    expect((await nvcf.functions.getVersion(fn.id, fn.versionId)).tags).toEqual(['a', 'b']);

    expect(await nvcf.functions.deleteVersion(fn.id, fn.versionId)).toBeUndefined();
    const gone = await refusal(nvcf.functions.getVersion(fn.id, fn.versionId));
    expect(gone.status).toBe(404);
    expect(gone.detail).toBe(`Function '${fn.id}' version '${fn.versionId}' not found`);
    expect((await nvcf.functions.listVersions(fn.id)).map((v) => v.versionId)).toEqual([v2.versionId]);
    // Deleting the last version deletes the function.
    await nvcf.functions.deleteVersion(fn.id, v2.versionId);
    expect((await refusal(nvcf.functions.listVersions(fn.id))).status).toBe(404);
    expect(await nvcf.functions.listIds()).not.toContain(fn.id);
  });

  it('answers refusals as NvcfError: 404 for an unknown function, 400 for a bad body or id', async () => {
    const unknown = crypto.randomUUID();
    const notFound = await refusal(nvcf.functions.listVersions(unknown));
    expect(notFound).toMatchObject({ status: 404, detail: `Function '${unknown}' not found`, isClientError: true });
    expect((await refusal(nvcf.functions.createVersion(unknown, createBody('x')))).status).toBe(404);
    expect((await refusal(nvcf.queues.depth(unknown))).status).toBe(404);

    const badName = await refusal(nvcf.functions.create({ ...createBody('x'), name: '-bad' }));
    expect(badName.status).toBe(400);
    expect(badName.detail).toMatch(/^Invalid request: 'name' must match/);
    const noModel = await refusal(
      nvcf.functions.create({
        ...createBody('x'),
        models: [{ name: 'nope', version: '1', uri: 'model-repository://nope/1' }],
      }),
    );
    expect(noModel.detail).toMatch(/not in any worker's model repository/);

    // A path parameter stays one segment: the gateway sees the id as given, not another route.
    const slashed = await refusal(nvcf.functions.getVersion('../assets', 'x/y'));
    expect(slashed.status).toBe(400);
    expect(slashed.detail).toBe("functionId '../assets' is not a UUID");
  });

  it('sets a container function’s secrets: named in its DTO, never returned; a name twice is a 400', async () => {
    const fn = await nvcf.functions.create({
      name: 'sdk-secrets',
      inferenceUrl: '/echo',
      containerImage: 'nvcf/echo-server:dev',
      secrets: [{ name: 'API_TOKEN', value: 'hidden-value-one' }],
    });
    expect(fn.secrets).toEqual(['API_TOKEN']);
    const other = { name: 'OTHER', value: 'x' };
    const secrets = [{ name: 'API_TOKEN', value: 'hidden-value-two' }, other];
    await expect(nvcf.functions.updateSecrets(fn.id, fn.versionId, { secrets })).resolves.toBeUndefined();
    const read = await nvcf.functions.getVersion(fn.id, fn.versionId);
    expect(read.secrets).toEqual(['API_TOKEN', 'OTHER']);
    expect(JSON.stringify(read)).not.toContain('hidden-value');
    const twice = await refusal(nvcf.functions.updateSecrets(fn.id, fn.versionId, { secrets: [other, { ...other }] }));
    expect(twice).toMatchObject({ status: 400, detail: "Invalid request: 'secrets' names 'OTHER' more than once" });
    await nvcf.functions.updateSecrets(fn.id, fn.versionId, { secrets: [] });
    expect((await nvcf.functions.getVersion(fn.id, fn.versionId)).secrets).toEqual([]);
  });
});

describe('deployments and queues', () => {
  it('deploys a version; its requests wait in its queue until a worker comes; updates and undeploys it', async () => {
    const fn = await nvcf.functions.create(createBody('sdk-deployed'));
    const invalid = await refusal(
      nvcf.deployments.create(fn.id, fn.versionId, deployBody({ minInstances: 3, maxInstances: 1 })),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.detail).toBe("Invalid request: 'minInstances' must be lesser than or equal to 'maxInstances'");

    // minInstances 0: invocable with no worker; requests wait in the queue.
    const deployed = await nvcf.deployments.create(fn.id, fn.versionId, deployBody());
    expect(deployed).toEqual({
      functionId: fn.id,
      functionVersionId: fn.versionId,
      functionName: 'sdk-deployed',
      ncaId: fn.ncaId,
      functionStatus: 'DEPLOYING',
      requestQueueUrl: expect.any(String),
      healthInfo: [],
      deploymentSpecifications: deployBody().deploymentSpecifications,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const twice = await refusal(nvcf.deployments.create(fn.id, fn.versionId, deployBody()));
    expect(twice.detail).toMatch(/already deployed; use PUT/);

    let queued!: (requestId: string) => void;
    const firstWait = new Promise<string>((r) => {
      queued = r;
    });
    const answer = nvcf.invoke(fn.id, simpleBody, { pollSeconds: 1, onProgress: (p) => queued(p.requestId) });
    const requestId = await firstWait;
    const waiting = {
      functionVersionId: fn.versionId,
      functionName: 'sdk-deployed',
      functionStatus: 'DEPLOYING',
      queueDepth: 1,
    };
    expect(await nvcf.queues.depth(fn.id)).toEqual({ functionId: fn.id, queues: [waiting] });
    expect(await nvcf.queues.depth(fn.id, fn.versionId)).toEqual({ functionId: fn.id, queues: [waiting] });
    expect(await nvcf.queues.position(requestId)).toEqual({
      functionId: fn.id,
      functionVersionId: fn.versionId,
      positionInQueue: 0,
    });

    const worker = await h.worker();
    const done = await answer;
    expect(done.requestId).toBe(requestId);
    expect(output(done, 'OUTPUT0')).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    await until(async () => (await nvcf.queues.depth(fn.id)).queues[0]?.queueDepth === 0, 'the queue to drain');
    expect((await refusal(nvcf.queues.position(requestId))).status).toBe(404);

    const updated = await nvcf.deployments.update(
      fn.id,
      fn.versionId,
      deployBody({ minInstances: 1, maxInstances: 1 }),
    );
    expect(updated.deploymentSpecifications[0]).toMatchObject({ minInstances: 1, maxInstances: 1 });
    await until(async () => (await nvcf.deployments.get(fn.id, fn.versionId)).functionStatus === 'ACTIVE', 'ACTIVE');
    const active = await nvcf.functions.getVersion(fn.id, fn.versionId);
    expect(active.activeInstances).toEqual([
      {
        instanceId: worker.workerId,
        functionId: fn.id,
        functionVersionId: fn.versionId,
        instanceStatus: 'ACTIVE',
        ncaId: fn.ncaId,
        // What the worker reports of its machine (the harness's workers: the defaults).
        gpu: 'CPU',
        instanceType: 'cpu.x1',
        backend: 'default',
        instanceCreatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        instanceUpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    // The worker's pool is a cluster group, with the machine it reports.
    expect((await nvcf.clusterGroups.list()).find((g) => g.name === 'default')?.gpus).toEqual([
      { name: 'CPU', instanceTypes: [{ name: 'cpu.x1', description: 'CPU worker (cpu.x1)', default: true }] },
    ]);
    const gpu = await refusal(nvcf.deployments.update(fn.id, fn.versionId, deployBody({ gpu: 'H100' })));
    expect(gpu.detail).toBe("Invalid request: 'gpu' and 'backend' of a deployment cannot change");

    const undeployed = await nvcf.deployments.delete(fn.id, fn.versionId);
    expect(undeployed).toMatchObject({ id: fn.id, versionId: fn.versionId, status: 'INACTIVE' });
    expect(await nvcf.deployments.get(fn.id, fn.versionId)).toMatchObject({
      functionStatus: 'INACTIVE',
      deploymentSpecifications: [],
    });
    const inactive = await refusal(nvcf.invoke(fn.id, simpleBody));
    expect(inactive.status).toBe(400);
    expect(inactive.detail).toBe(`Function id '${fn.id}': INACTIVE function cannot be invoked`);
    expect((await refusal(nvcf.deployments.update(fn.id, fn.versionId, deployBody()))).status).toBe(404);

    await nvcf.functions.deleteVersion(fn.id, fn.versionId);
    await worker.close();
  });
});

describe('assets', () => {
  it('uploads bytes, a stream and a Blob that a function reads as inputs; lists, reads and deletes them', async () => {
    const worker = await h.worker();
    const tens = Array.from({ length: 16 }, (_, i) => i * 10);
    const fromBytes = await nvcf.assets.upload(int32Bytes(tens), {
      contentType: 'application/octet-stream',
      description: 'INPUT0 of simple',
    });
    expect(fromBytes).toMatchObject({ contentType: 'application/octet-stream', description: 'INPUT0 of simple' });
    expect(fromBytes.uploadUrl).toContain(`/v2/nvcf/assets/${fromBytes.assetId}/upload?`);

    // A stream in two chunks: sent chunked, in one go (never retried).
    const sevens = int32Bytes(Array(16).fill(7));
    const fromStream = await nvcf.assets.upload(
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(sevens.subarray(0, 24));
          c.enqueue(sevens.subarray(24));
          c.close();
        },
      }),
      { contentType: 'application/x-int32' },
    );
    expect(fromStream.description).toBe('');

    const asInput = (name: string, assetId: string) => ({
      name,
      datatype: 'INT32',
      shape: [1, 16],
      parameters: { nvcf_asset_id: assetId },
    });
    const both = await nvcf.invoke(
      fnId('simple'),
      { inputs: [asInput('INPUT0', fromBytes.assetId), asInput('INPUT1', fromStream.assetId)] },
      { assetIds: [fromBytes.assetId, fromStream.assetId] },
    );
    expect(output(both, 'OUTPUT0')).toEqual(tens.map((t) => t + 7));
    expect(output(both, 'OUTPUT1')).toEqual(tens.map((t) => t - 7));

    const fromBlob = await nvcf.assets.upload(new Blob([int32Bytes(Array(16).fill(-1))]), {
      contentType: 'application/octet-stream',
      description: 'a blob',
    });
    const blobbed = await nvcf.invoke(
      fnId('simple'),
      { inputs: [asInput('INPUT0', fromBlob.assetId), simpleBody.inputs[1]] },
      { assetIds: [fromBlob.assetId] },
    );
    expect(output(blobbed, 'OUTPUT0')).toEqual(Array(16).fill(0));

    const listed = await nvcf.assets.list();
    expect(listed).toEqual(
      expect.arrayContaining([
        { assetId: fromBytes.assetId, contentType: 'application/octet-stream', description: 'INPUT0 of simple' },
        { assetId: fromStream.assetId, contentType: 'application/x-int32', description: '' },
        { assetId: fromBlob.assetId, contentType: 'application/octet-stream', description: 'a blob' },
      ]),
    );
    const got = await nvcf.assets.get(fromBytes.assetId);
    expect(got).toEqual({
      assetId: fromBytes.assetId,
      contentType: 'application/octet-stream',
      description: 'INPUT0 of simple',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    await nvcf.assets.delete(fromBytes.assetId);
    const gone = await refusal(nvcf.assets.get(fromBytes.assetId));
    expect(gone.status).toBe(404);
    expect(gone.detail).toBe(`NotFound error: failed to find asset ${fromBytes.assetId}`);
    expect((await refusal(nvcf.assets.delete(fromBytes.assetId))).status).toBe(404);
    const referenced = await refusal(
      nvcf.invoke(fnId('simple'), simpleBody, { assetIds: [fromBytes.assetId], idempotencyKey: false }),
    );
    expect(referenced.status).toBe(404);
    expect((await nvcf.assets.list()).map((a) => a.assetId)).not.toContain(fromBytes.assetId);
    await nvcf.assets.delete(fromStream.assetId);
    await nvcf.assets.delete(fromBlob.assetId);
    await worker.close();
  });

  it('PUTs to the signed URL without the credential; a refused upload leaves no asset behind', async () => {
    const sent: { method: string; url: string; headers: Record<string, string> }[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push({ method: init?.method ?? 'GET', url: String(input), headers: { ...(init?.headers as object) } });
      return fetch(input, init);
    };
    const small = (await h.gateway({ ASSET_MAX_BYTES: '32' })).url;
    const client = new NvcfClient({ baseUrl: small, apiKey: ADMIN_KEY, fetch: recording });

    const created = await client.assets.create({ contentType: 'text/plain', description: '  two-step  ' });
    expect(created.description).toBe('two-step'); // the gateway trims it, and signs what it kept
    await client.assets.uploadTo(created, 'hello');
    const put = sent.find((r) => r.method === 'PUT');
    expect(put?.url).toBe(created.uploadUrl);
    expect(put?.headers).toEqual({ 'content-type': 'text/plain', 'x-amz-meta-nvcf-asset-description': 'two-step' });
    expect(sent.find((r) => r.method === 'POST')?.headers.authorization).toBe(`Bearer ${ADMIN_KEY}`);

    const before = (await client.assets.list()).map((a) => a.assetId);
    await expect(client.assets.upload('x', { contentType: 'text/plain', description: '日本語' })).rejects.toThrow(
      /Latin-1 characters only \(found U\+65E5\)/,
    );
    const tooLarge = await refusal(
      client.assets.upload(new Uint8Array(64), { contentType: 'application/octet-stream' }),
    );
    expect(tooLarge.status).toBe(413);
    const streamedTooLarge = await refusal(
      client.assets.upload(new Blob([new Uint8Array(64)]).stream(), { contentType: 'application/octet-stream' }),
    );
    expect(streamedTooLarge.status).toBe(413);
    expect((await client.assets.list()).map((a) => a.assetId)).toEqual(before);
    await client.assets.delete(created.assetId);
  });

  it('after a 503 retries an upload of bytes, never one of a stream (its bytes were read once)', async () => {
    let refuseNext = true;
    const puts: string[] = [];
    // The first PUT of each upload reads its body, then is answered 503 as an overloaded store would.
    const flaky: typeof fetch = async (input, init) => {
      if (init?.method !== 'PUT') return fetch(input, init);
      puts.push(String(input));
      if (!refuseNext) return fetch(input, init);
      refuseNext = false;
      if (init.body instanceof ReadableStream) await new Response(init.body).arrayBuffer();
      const problem = { title: 'Service Unavailable', status: 503, detail: 'busy' };
      return new Response(JSON.stringify(problem), {
        status: 503,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '0' },
      });
    };
    const client = new NvcfClient({ baseUrl: gatewayUrl, apiKey: ADMIN_KEY, fetch: flaky });

    const bytes = await client.assets.upload(int32Bytes([1, 2, 3]), { contentType: 'application/octet-stream' });
    expect(puts).toEqual([bytes.uploadUrl, bytes.uploadUrl]);
    await client.assets.delete(bytes.assetId);

    refuseNext = true;
    puts.length = 0;
    const before = (await client.assets.list()).map((a) => a.assetId);
    const stream = new Blob([int32Bytes([1, 2, 3])]).stream();
    const refused = await refusal(client.assets.upload(stream, { contentType: 'application/octet-stream' }));
    expect(refused).toMatchObject({ status: 503, detail: 'busy' });
    expect(puts).toHaveLength(1);
    expect((await client.assets.list()).map((a) => a.assetId)).toEqual(before);
  });
});
