import { randomUUID } from 'node:crypto';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { createFunctionRegistry, type FunctionRegistry, type FunctionVersion } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { buildSimpleModel } from '@nvcf/models';
import { createKeys } from '@nvcf/queue';
import type { RunningWorker } from '@nvcf/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, accountKey, createHarness, fnId, type Harness, simpleRequest, verId } from './harness.ts';

/**
 * Models belong to an account. An uploaded model (`asset://…`, kept as `fv-<versionId>`) is its version's alone:
 * no other account (nor another version) may name it, a version stored naming another's (as a gateway before this
 * rule stored it) is never served and holds nothing back, and the owner's delete removes it. A repository model is
 * for the account that publishes it (the workers' NVCF_NCA_ID) and the accounts its repository function is shared
 * with; to any other it is the same 400 as a model that does not exist.
 */
let h: Harness;
let gw: RunningGateway;
let worker: RunningWorker;
let registry: FunctionRegistry;
/** team-b's own admin key. */
let b: string;

interface Fn {
  id: string;
  versionId: string;
}

const call = (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const json = async <T>(res: Response, status = 200): Promise<T> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
};
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const functionBody = (name: string, uri: string) => ({
  name,
  inferenceUrl: '/v2/models/simple/infer',
  apiBodyFormat: 'PREDICT_V2',
  models: [{ name: 'm', version: '1', uri }],
});
const DEPLOYMENT = {
  deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 1, maxInstances: 1 }],
};
const create = (key: string, name: string, uri: string) =>
  call('POST', '/v2/nvcf/functions', key, functionBody(name, uri));
const deploy = async (key: string, fn: Fn) =>
  json(await call('POST', `/v2/nvcf/deployments/functions/${fn.id}/versions/${fn.versionId}`, key, DEPLOYMENT));
const statusOf = async (key: string, fn: Fn) =>
  (
    await json<{ function: { status: string } }>(
      await call('GET', `/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`, key),
    )
  ).function.status;
const pexec = (key: string, fn: Fn, pollSeconds = 30) =>
  call('POST', `/v2/nvcf/pexec/functions/${fn.id}/versions/${fn.versionId}`, key, simpleRequest(), {
    'nvcf-poll-seconds': String(pollSeconds),
  });
const detail = async (res: Response) => {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return ((await res.json()) as { detail: string }).detail;
};
/** What an account is told of a model that does not exist. */
const unknownModel = (name: string) =>
  `Invalid request: model '${name}' version '1' is not in any worker's model repository`;

/** The operator's function whose model is an uploaded `.onnx` asset (`fv-<its versionId>`), created, not deployed. */
async function uploadedModelFunction(name: string): Promise<Fn> {
  const asset = await json<{ assetId: string; uploadUrl: string }>(
    await call('POST', '/v2/nvcf/assets', ADMIN_KEY, { contentType: 'application/octet-stream', description: 'm' }),
  );
  const put = await fetch(asset.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-nvcf-asset-description': 'm' },
    body: buildSimpleModel(),
  });
  expect(put.status).toBe(200);
  return (await json<{ function: Fn }>(await create(ADMIN_KEY, name, `asset://${asset.assetId}`))).function;
}
const storedModel = (fn: Fn) => join(h.env.ASSET_STORE_DIR as string, 'models', fn.versionId, 'model.onnx');
const modelDir = (fn: Fn) => join(h.modelRepository, `fv-${fn.versionId}`);

/**
 * team-b's deployed version naming the owner's uploaded model, written straight into the registry as a gateway
 * before this fix stored it.
 */
async function legacyBorrower(owner: Fn): Promise<Fn> {
  const stored = await registry.get(owner.id, owner.versionId);
  if (!stored?.model) throw new Error('the owner version has no model');
  const borrower: FunctionVersion = {
    ...stored,
    id: randomUUID(),
    versionId: randomUUID(),
    name: 'borrowed',
    ncaId: 'team-b',
    createdAt: new Date().toISOString(),
    models: [{ name: stored.model.name, version: '1', uri: `model-repository://${stored.model.name}/1` }],
    deployment: { minInstances: 1, maxInstances: 1, maxRequestConcurrency: 1, specifications: [] },
  };
  await registry.upsert(borrower);
  await registry.notifyChanged();
  return { id: borrower.id, versionId: borrower.versionId };
}

/** Returns once the worker has synced past everything the registry held before the call. */
async function workerSynced(): Promise<void> {
  const marker = (await json<{ function: Fn }>(await create(ADMIN_KEY, 'marker', 'model-repository://simple/1')))
    .function;
  await deploy(ADMIN_KEY, marker);
  await until(async () => worker.versionIds.includes(marker.versionId), 'the worker to serve the marker');
}

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
  worker = await h.worker();
  registry = createFunctionRegistry(h.redis, createKeys(h.keyPrefix));
  b = await accountKey(gw.url, 'team-b', {
    scopes: [
      'invoke_function',
      'list_functions',
      'register_function',
      'update_function',
      'delete_function',
      'deploy_function',
      'authorize_clients',
      'manage_keys',
    ],
  });
});
afterAll(async () => {
  await h?.close();
});

describe('an uploaded model belongs to its version', () => {
  it('another account naming it as model-repository://fv-<versionId>/1 gets the 400 of an unknown model', async () => {
    const owner = await uploadedModelFunction('private-upload');
    await deploy(ADMIN_KEY, owner);
    await until(async () => (await statusOf(ADMIN_KEY, owner)) === 'ACTIVE', 'the owner’s version to be served');
    const name = `fv-${owner.versionId}`;
    const unknown = `fv-${randomUUID()}`;

    expect(await detail(await create(b, 'borrowed', `model-repository://${name}/1`))).toBe(unknownModel(name));
    expect(await detail(await create(b, 'probe', `model-repository://${unknown}/1`))).toBe(unknownModel(unknown));
    // Named by name and version rather than by URI, it is the same model: refused alike.
    const byName = await call('POST', '/v2/nvcf/functions', b, {
      ...functionBody('borrowed', ''),
      models: [{ name, version: '1', uri: `ngc://${name}:1` }],
    });
    expect(await detail(byName)).toBe(unknownModel(name));
    // Not even its owner's other versions: an uploaded model is reached through its own version only.
    expect(await detail(await create(ADMIN_KEY, 'again', `model-repository://${name}/1`))).toBe(unknownModel(name));
    // The owner's version is unchanged.
    expect((await pexec(ADMIN_KEY, owner)).status).toBe(200);
  });

  it('a stored borrower version is never served, and does not keep the owner’s version from becoming ACTIVE', async () => {
    const owner = await uploadedModelFunction('owner-after-borrower');
    // The borrower is deployed first: the worker meets the model under the borrower's version before the owner's.
    const borrower = await legacyBorrower(owner);
    await workerSynced();
    expect(worker.versionIds).not.toContain(borrower.versionId);

    await deploy(ADMIN_KEY, owner);
    await until(async () => (await statusOf(ADMIN_KEY, owner)) === 'ACTIVE', 'the owner’s version to be served');
    expect((await pexec(ADMIN_KEY, owner)).status).toBe(200);

    // With the model loaded for its owner, the borrower's version is still not served, nor invocable.
    await workerSynced();
    expect(worker.versionIds).not.toContain(borrower.versionId);
    expect(await statusOf(b, borrower)).toBe('DEPLOYING');
    const refused = await pexec(b, borrower);
    expect(await detail(refused)).toBe(`Function id '${borrower.id}': DEPLOYING function cannot be invoked`);
  });

  it('the owner’s delete removes the model’s stored copy and its worker directory, a borrower notwithstanding', async () => {
    const owner = await uploadedModelFunction('owner-deletes');
    await deploy(ADMIN_KEY, owner);
    await until(async () => (await statusOf(ADMIN_KEY, owner)) === 'ACTIVE', 'the owner’s version to be served');
    const borrower = await legacyBorrower(owner);
    await workerSynced();
    expect(worker.versionIds).not.toContain(borrower.versionId);
    expect(await exists(storedModel(owner))).toBe(true);
    expect(await exists(modelDir(owner))).toBe(true);

    expect((await call('DELETE', `/v2/nvcf/functions/${owner.id}/versions/${owner.versionId}`, ADMIN_KEY)).status).toBe(
      204,
    );
    expect(await exists(storedModel(owner))).toBe(false);
    await until(async () => !(await exists(modelDir(owner))), 'the worker to remove the deleted version’s model');
    await workerSynced();
    expect(worker.versionIds).not.toContain(borrower.versionId);
    expect(await exists(modelDir(owner))).toBe(false);
  });
});

describe('a repository model belongs to the account that publishes it', () => {
  const simple = { id: fnId('simple'), versionId: verId('simple') };
  const shareSimple = (parties: string[]) =>
    call('POST', `/v2/nvcf/authorizations/functions/${simple.id}`, ADMIN_KEY, {
      authorizedParties: parties.map((ncaId) => ({ ncaId })),
    });

  it('another account may not name it unless the repository function is shared with it', async () => {
    // The operator's account publishes it (the worker's NVCF_NCA_ID is the gateway's): it may build on it.
    expect(
      (await json<{ function: Fn }>(await create(ADMIN_KEY, 'own', 'model-repository://simple/1'))).function,
    ).toBeDefined();

    expect(await detail(await create(b, 'wrapped', 'model-repository://simple/1'))).toBe(unknownModel('simple'));
    expect(await detail(await create(b, 'probe', 'model-repository://no-such-model/1'))).toBe(
      unknownModel('no-such-model'),
    );

    await json(await shareSimple(['team-b']));
    const wrapped = (
      await json<{ function: Fn & { ncaId: string } }>(await create(b, 'wrapped', 'model-repository://simple/1'))
    ).function;
    expect(wrapped.ncaId).toBe('team-b');
    await deploy(b, wrapped);
    await until(async () => (await statusOf(b, wrapped)) === 'ACTIVE', 'team-b’s function to be served');
    await json(await pexec(b, wrapped));

    // A share of one version only covers that version of the model.
    await json(await shareSimple([]));
    expect(await detail(await create(b, 'wrapped-again', 'model-repository://simple/1'))).toBe(unknownModel('simple'));
    await json(
      await call('POST', `/v2/nvcf/authorizations/functions/${simple.id}/versions/${simple.versionId}`, ADMIN_KEY, {
        authorizedParties: [{ ncaId: 'team-b' }],
      }),
    );
    expect((await create(b, 'wrapped-again', 'model-repository://simple/1')).status).toBe(200);
  });

  it('withdrawing the share stops its workers serving functions built on it; one stored without a share never is', async () => {
    const unshare = async () => {
      await json(await call('DELETE', `/v2/nvcf/authorizations/functions/${simple.id}`, ADMIN_KEY));
      await json(
        await call('DELETE', `/v2/nvcf/authorizations/functions/${simple.id}/versions/${simple.versionId}`, ADMIN_KEY),
      );
    };
    await unshare();
    await json(await shareSimple(['team-b']));
    const built = (await json<{ function: Fn }>(await create(b, 'built-on-simple', 'model-repository://simple/1')))
      .function;
    await deploy(b, built);
    await until(async () => (await statusOf(b, built)) === 'ACTIVE', 'team-b’s function to be served');
    await json(await pexec(b, built));

    await unshare();
    await until(
      async () => !worker.versionIds.includes(built.versionId),
      'the worker to stop serving team-b’s function',
    );
    expect(await statusOf(b, built)).toBe('DEPLOYING');
    // Within FUNCTION_CACHE_MS the gateway may still queue a call (it waits for a worker); then it refuses it.
    await until(async () => (await pexec(b, built, 1)).status === 400, 'the gateway to refuse team-b’s calls');
    expect(await detail(await pexec(b, built))).toBe(`Function id '${built.id}': DEPLOYING function cannot be invoked`);

    // A version naming it without any share, as a gateway before the check stored it, is never served.
    const publisher = await registry.get(simple.id, simple.versionId);
    if (!publisher?.model) throw new Error('the worker has not published simple');
    const stored: FunctionVersion = {
      ...publisher,
      id: randomUUID(),
      versionId: randomUUID(),
      name: 'wrapped-unshared',
      ncaId: 'team-b',
      createdAt: new Date().toISOString(),
      deployment: { minInstances: 1, maxInstances: 1, maxRequestConcurrency: 1, specifications: [] },
    };
    await registry.upsert(stored);
    await registry.notifyChanged();
    // The operator's own functions on the model are served throughout (the marker is one).
    await workerSynced();
    expect(worker.versionIds).not.toContain(stored.versionId);
    expect(worker.versionIds).not.toContain(built.versionId);

    // Shared again, team-b's function is served again.
    await json(await shareSimple(['team-b']));
    await until(async () => worker.versionIds.includes(built.versionId), 'the worker to serve team-b’s function again');
    await until(
      async () => worker.versionIds.includes(stored.versionId),
      'the stored version, now shared, to be served',
    );
    await until(async () => (await statusOf(b, built)) === 'ACTIVE', 'team-b’s function to be ACTIVE again');
    await json(await pexec(b, built));
  });
});
