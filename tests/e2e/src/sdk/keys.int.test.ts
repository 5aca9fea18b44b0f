import type { ApiKey } from '@nvcf/client';
import { NvcfClient, NvcfError } from '@nvcf/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness } from '../harness.ts';

let h: Harness;
let nvcf: NvcfClient;
let gatewayUrl: string;

beforeAll(async () => {
  h = await createHarness();
  // Publishes the repository's functions (what a key may be restricted to), then leaves: no invocation here.
  await (await h.worker()).close();
  // No auth cache: a revoked key is refused on its very next call.
  gatewayUrl = (await h.gateway({ AUTH_CACHE_MS: '0' })).url;
  nvcf = new NvcfClient({ baseUrl: gatewayUrl, apiKey: ADMIN_KEY });
});
afterAll(async () => {
  await h?.close();
});

/** The NvcfError a call rejects with (fails the test when it resolves or throws something else). */
async function refusal(call: Promise<unknown>): Promise<NvcfError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NvcfError);
  return err as NvcfError;
}

describe('keys', () => {
  it('creates a key whose secret works, lists it, revokes it', async () => {
    // As in the README.
    const { key, value } = await nvcf.keys.create({
      name: 'ci',
      scopes: ['list_functions'],
      functionIds: [fnId('simple')],
    });
    expect(value).toMatch(/^nvapi-/);
    expect(key).toEqual<ApiKey>({
      id: expect.any(String),
      name: 'ci',
      scopes: ['list_functions'],
      functionIds: [fnId('simple')],
      ncaId: 'self-hosted',
      createdAt: expect.any(String),
    });

    const ci = new NvcfClient({ baseUrl: gatewayUrl, apiKey: value });
    expect((await ci.functions.list()).map((f) => f.name)).toEqual(['simple']);
    // list_functions only: managing keys is refused.
    expect((await refusal(ci.keys.list())).status).toBe(403);

    const listed = await nvcf.keys.list();
    expect(listed.find((k) => k.id === key.id)).toEqual(key);
    expect(listed[0]?.name).toBe('bootstrap-admin');

    expect(await nvcf.keys.revoke(key.id)).toBeUndefined();
    expect((await refusal(ci.functions.list())).status).toBe(401);
    expect((await nvcf.keys.list()).find((k) => k.id === key.id)?.revokedAt).toEqual(expect.any(String));
  });

  it('refusals are NvcfErrors: a bad body 400, a scope the caller lacks 403, an unknown id 404', async () => {
    const bad = await refusal(nvcf.keys.create({ name: '', scopes: ['list_functions'] }));
    expect(bad.status).toBe(400);
    expect(bad.detail).toMatch(/'name' must not be empty/);
    const unknownScope = await refusal(nvcf.keys.create({ name: 'x', scopes: ['root'] }));
    expect(unknownScope.status).toBe(400);
    expect(unknownScope.detail).toMatch(/'scopes' has an unknown scope "root"/);

    const manager = await nvcf.keys.create({ name: 'manager', scopes: ['manage_keys', 'list_functions'] });
    const asManager = new NvcfClient({ baseUrl: gatewayUrl, apiKey: manager.value });
    const escalation = await refusal(asManager.keys.create({ name: 'x', scopes: ['invoke_function'] }));
    expect(escalation.status).toBe(403);
    expect(escalation.detail).toMatch(/'invoke_function'/);

    const gone = await refusal(nvcf.keys.revoke('00000000-0000-4000-8000-000000000000'));
    expect(gone.status).toBe(404);
    expect(gone.detail).toBe("API key '00000000-0000-4000-8000-000000000000' not found");
  });

  it('stops a call with its signal', async () => {
    const stop = new AbortController();
    stop.abort(new Error('stopped by the test'));
    await expect(nvcf.keys.list({ signal: stop.signal })).rejects.toThrow('stopped by the test');
  });
});
