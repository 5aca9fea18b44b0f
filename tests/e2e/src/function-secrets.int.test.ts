import { randomBytes } from 'node:crypto';
import { createFunctionSecretStore, createSecretCipher, secretKeyId } from '@nvcf/control-store';
import type { RunningGateway } from '@nvcf/gateway';
import { createKeys } from '@nvcf/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CreatedVersion,
  createFunction,
  deploy,
  echoCommand,
  echoRuntime,
  processModeEnv,
  statusOf,
  tempDir,
  until,
} from './container-harness.ts';
import { type ChildGateway, createHarness, gfetch, type Harness, pexec, SECRETS_KEY } from './harness.ts';

/**
 * Function secrets end to end (NVCF: CreateFunctionRequest.secrets, updateSecrets): a container function's process
 * sees them in its environment, a PUT replaces them and restarts it, and nothing readable — DTOs, Redis, the
 * gateway's log — ever holds a value.
 */
let h: Harness;
let gw: ChildGateway;
let work: Awaited<ReturnType<typeof tempDir>>;
let runtime: Awaited<ReturnType<typeof echoRuntime>>;
let echo: CreatedVersion;

const FIRST = 'first-value-4f1c9b2e-never-shown';
const SECOND = 'second-value-8a7d3c10-never-shown';
const OTHER = 'other-value-0e5b6a44-never-shown';

beforeAll(async () => {
  h = await createHarness();
  work = await tempDir('nvcf-secrets-work-');
  // In its own process at the most verbose level: the test reads every line it logs.
  gw = await h.spawnGateway({ LOG_LEVEL: 'trace' });
  runtime = await echoRuntime();
  await h.worker(processModeEnv(work.path));
  echo = await createFunction(gw.url, {
    name: 'echo-secrets',
    inferenceUrl: '/echo',
    healthUri: '/health',
    containerImage: 'nvcf/echo-server:dev',
    containerArgs: echoCommand(runtime),
    containerEnvironment: [{ key: 'API_TOKEN', value: 'overridden by the secret' }],
    secrets: [{ name: 'API_TOKEN', value: FIRST }],
  });
  await deploy(gw.url, echo);
  await until(async () => (await statusOf(gw.url, echo)) === 'ACTIVE', 'the echo function to be ACTIVE');
}, 120_000);
afterAll(async () => {
  await h?.close();
  await work?.remove();
  await runtime?.remove();
});

const secretsPath = (fv: CreatedVersion) => `/v2/nvcf/secrets/functions/${fv.id}/versions/${fv.versionId}`;
const send = (method: string, path: string, body?: unknown, base = gw.url) =>
  gfetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
/** The echo server's environment, as it answers an invocation. */
async function serverEnv(): Promise<Record<string, string>> {
  const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${echo.id}`, {}, { 'nvcf-poll-seconds': '60' });
  expect(res.status).toBe(200);
  return ((await res.json()) as { env: Record<string, string> }).env;
}
/** Every byte stored under the harness's prefix (DUMP: the stored serialization of any type). */
async function redisBytes(): Promise<Buffer> {
  const names = await h.redis.keys(`${h.keyPrefix}:*`);
  const dumps = await Promise.all(names.map((n) => h.redis.dumpBuffer(n)));
  return Buffer.concat(dumps.flatMap((d) => (d ? [d] : [])));
}
async function problemOf(res: Response): Promise<{ status: number; detail: string }> {
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  return (await res.json()) as { status: number; detail: string };
}

describe('function secrets: a container function’s process', () => {
  it('gets them as environment variables, over a containerEnvironment entry of the same name', async () => {
    expect((await serverEnv()).API_TOKEN).toBe(FIRST);
  });

  it('gets a replaced set: the PUT answers 200 with no body, and its server restarts with the new values', async () => {
    const res = await send('PUT', secretsPath(echo), {
      secrets: [
        { name: 'API_TOKEN', value: SECOND },
        { name: 'OTHER', value: OTHER },
      ],
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    let env: Record<string, string> = {};
    await until(async () => {
      env = await serverEnv();
      return env.API_TOKEN === SECOND;
    }, 'the server to see the new value');
    expect(env.OTHER).toBe(OTHER);
  });

  it('is never shown a value by any read: the DTOs name the secrets only', async () => {
    const reads = [
      `/v2/nvcf/functions/${echo.id}/versions/${echo.versionId}`,
      `/v2/nvcf/functions/${echo.id}/versions`,
      '/v2/nvcf/functions',
      `/v2/nvcf/deployments/functions/${echo.id}/versions/${echo.versionId}`,
    ];
    for (const path of reads) {
      const text = await (await send('GET', path)).text();
      for (const value of [FIRST, SECOND, OTHER]) expect(text, path).not.toContain(value);
    }
    const fn = (await (await send('GET', reads[0] ?? '')).json()) as { function: { secrets?: string[] } };
    expect(fn.function.secrets).toEqual(['API_TOKEN', 'OTHER']);
  });

  it('keeps them encrypted in Redis: no stored byte holds a value', async () => {
    const stored = await redisBytes();
    expect(stored.length).toBeGreaterThan(0);
    for (const value of [FIRST, SECOND, OTHER]) expect(stored.includes(Buffer.from(value)), value).toBe(false);
  });

  it('never logs a value', async () => {
    // The gateway writes its log in buffered chunks: a request made now, once its access line is out, marks
    // that every line logged before it has been written.
    const marker = `/v2/nvcf/log-marker-${randomBytes(8).toString('hex')}`;
    await (await send('GET', marker)).body?.cancel();
    await until(async () => gw.logs().some((l) => l.path === marker), "the marker request's access line");
    const text = gw
      .logs()
      .map((l) => JSON.stringify(l))
      .join('\n');
    expect(text).toContain('/v2/nvcf/secrets/functions/'); // the PUT's access-log line is there
    for (const value of [FIRST, SECOND, OTHER]) expect(text).not.toContain(value);
  });
});

describe('function secrets: refusals', () => {
  it('refuses names and values NVCF’s SecretDto refuses, and a name given twice, with a 400 problem', async () => {
    const cases: [unknown, RegExp][] = [
      [{ secrets: [{ name: '_LEADING', value: 'v' }] }, /'name' must match/],
      [{ secrets: [{ name: 'HAS-DASH', value: 'v' }] }, /'name' must match/],
      [{ secrets: [{ name: 'N'.repeat(65), value: 'v' }] }, /'name' must be at most 64 characters/],
      [{ secrets: [{ name: 'EMPTY', value: '' }] }, /'value' must not be blank/],
      [{ secrets: [{ name: 'BIG', value: 'v'.repeat(4097) }] }, /'value' must be at most 4096 characters/],
      [
        {
          secrets: [
            { name: 'TWICE', value: 'a' },
            { name: 'TWICE', value: 'b' },
          ],
        },
        /names 'TWICE' more than once/,
      ],
      [{}, /'secrets'/],
      ['not json', /not valid JSON/],
    ];
    for (const [body, detail] of cases) {
      const res = await send('PUT', secretsPath(echo), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await problemOf(res)).detail).toMatch(detail);
    }
    const created = await send('POST', '/v2/nvcf/functions', {
      name: 'dup',
      inferenceUrl: '/echo',
      containerImage: 'img',
      secrets: [
        { name: 'A', value: '1' },
        { name: 'A', value: '2' },
      ],
    });
    expect(created.status).toBe(400);
    // The set the refused calls would have replaced is still there.
    expect((await serverEnv()).API_TOKEN).toBe(SECOND);
  });

  it('404 for an unknown version, 400 for a path id that is not a UUID', async () => {
    const unknown = `/v2/nvcf/secrets/functions/${echo.id}/versions/00000000-0000-4000-8000-00000000dead`;
    expect((await send('PUT', unknown, { secrets: [] })).status).toBe(404);
    expect((await send('PUT', '/v2/nvcf/secrets/functions/x/versions/y', { secrets: [] })).status).toBe(400);
  });

  it('refuses secrets for a model function (no server receives them), on create and on PUT', async () => {
    const model = {
      name: 'model-with-secrets',
      inferenceUrl: '/v2/models/simple/infer',
      models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
    };
    const refused = await send('POST', '/v2/nvcf/functions', { ...model, secrets: [{ name: 'A', value: 'b' }] });
    expect(refused.status).toBe(400);
    expect((await problemOf(refused)).detail).toMatch(/a model function has none to receive them/);
    const fn = await createFunction(gw.url, { ...model, secrets: [] });
    const put = await send('PUT', secretsPath(fn), { secrets: [{ name: 'A', value: 'b' }] });
    expect(put.status).toBe(400);
    expect((await send('PUT', secretsPath(fn), { secrets: [] })).status).toBe(200);
  });

  it('403 for a key without update_secrets', async () => {
    const created = await send('POST', '/v2/nvcf/keys', { name: 'no-secrets', scopes: ['update_function'] });
    expect(created.status).toBe(201);
    const { value } = (await created.json()) as { value: string };
    const res = await fetch(`${gw.url}${secretsPath(echo)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ secrets: [] }),
    });
    expect(res.status).toBe(403);
    expect((await problemOf(res)).detail).toMatch(/update_secrets/);
  });
});

describe('function secrets: without NVCF_SECRETS_KEY', () => {
  let keyless: RunningGateway;
  beforeAll(async () => {
    keyless = await h.gateway({ NVCF_SECRETS_KEY: '' });
  });

  it('refuses a request that carries secrets with a 400 naming the key; everything else works', async () => {
    const body = { name: 'keyless', inferenceUrl: '/echo', containerImage: 'img', containerArgs: 'true' };
    const refused = await send(
      'POST',
      '/v2/nvcf/functions',
      { ...body, secrets: [{ name: 'A', value: 'b' }] },
      keyless.url,
    );
    expect(refused.status).toBe(400);
    expect((await problemOf(refused)).detail).toMatch(/no NVCF_SECRETS_KEY/);
    const fn = await createFunction(keyless.url, { ...body, secrets: [] });
    const put = await send('PUT', secretsPath(fn), { secrets: [{ name: 'A', value: 'b' }] }, keyless.url);
    expect(put.status).toBe(400);
    expect((await problemOf(put)).detail).toMatch(/no NVCF_SECRETS_KEY/);
    expect((await send('PUT', secretsPath(fn), { secrets: [] }, keyless.url)).status).toBe(200);
    // A version with secrets (made where the key is set) can still be deleted, and its secrets go with it.
    const withSecrets = await createFunction(gw.url, { ...body, name: 'keyed', secrets: [{ name: 'A', value: 'b' }] });
    const secretKeys = () => h.redis.keys(`${h.keyPrefix}:*${withSecrets.versionId}:secrets`);
    expect(await secretKeys()).toHaveLength(1);
    const del = await send(
      'DELETE',
      `/v2/nvcf/functions/${withSecrets.id}/versions/${withSecrets.versionId}`,
      undefined,
      keyless.url,
    );
    expect(del.status).toBe(204);
    expect(await secretKeys()).toEqual([]);
  });
});

describe('function secrets: key rotation', () => {
  it('a gateway started with a new key and the previous one re-encrypts every set under the new key', async () => {
    const newKey = randomBytes(32);
    const stored = () => h.redis.get(createKeys(h.keyPrefix).functionSecrets(echo.versionId));
    expect(await stored()).not.toMatch(new RegExp(`^v1:${secretKeyId(newKey)}:`));
    await h.gateway({ NVCF_SECRETS_KEY: newKey.toString('hex'), NVCF_SECRETS_PREVIOUS_KEY: SECRETS_KEY });
    await until(
      async () => (await stored())?.startsWith(`v1:${secretKeyId(newKey)}:`) === true,
      'the set under the new key',
    );
    // The previous key can go: the new one alone opens it.
    const onlyNew = createFunctionSecretStore(h.redis, createKeys(h.keyPrefix), createSecretCipher({ key: newKey }));
    expect(await onlyNew.read({ functionId: echo.id, versionId: echo.versionId })).toEqual({
      API_TOKEN: SECOND,
      OTHER,
    });
  });
});
