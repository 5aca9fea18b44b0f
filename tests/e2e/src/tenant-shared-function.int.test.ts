import type { RunningGateway } from '@nvcf/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, gfetch, type Harness } from './harness.ts';

/**
 * A function shared with another account is for invoking: the account it is shared with finds it and reads what
 * a caller needs, never how its owner runs it. Account A's container function carries a command line and an
 * environment holding a credential; B, which A shared it with, must see neither (nor the names of A's secrets).
 */
let h: Harness;
let gw: RunningGateway;
let a: string;
let b: string;
let fn: { id: string; versionId: string };

const CREDENTIAL = 'sk-live-0123456789abcdef';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const call = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { ...bearer(key), 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const json = async <T>(res: Response, status = 200): Promise<T> => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
};
interface Dto {
  id: string;
  versionId: string;
  containerImage?: string;
  containerArgs?: string;
  containerEnvironment: { key: string; value: string }[];
  secrets?: string[];
  ownedByDifferentAccount: boolean;
  inferenceUrl: string;
}

async function createKey(name: string, ncaId: string): Promise<string> {
  const scopes = ['invoke_function', 'list_functions', 'register_function', 'authorize_clients', 'update_secrets'];
  const res = await gfetch(`${gw.url}/v2/nvcf/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, scopes, ncaId }),
  });
  return (await json<{ value: string }>(res, 201)).value;
}

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
  a = await createKey('alice', 'team-a');
  b = await createKey('bob', 'team-b');
  const created = await call('POST', '/v2/nvcf/functions', a, {
    name: 'shared-container',
    inferenceUrl: '/echo',
    healthUri: '/health',
    containerImage: 'nvcf/echo-server:dev',
    containerArgs: `serve --token ${CREDENTIAL}`,
    containerEnvironment: [{ key: 'UPSTREAM_TOKEN', value: CREDENTIAL }],
    secrets: [{ name: 'DB_PASSWORD', value: 'hunter2' }],
  });
  fn = (await json<{ function: Dto }>(created)).function;
  await json(
    await call('POST', `/v2/nvcf/authorizations/functions/${fn.id}`, a, { authorizedParties: [{ ncaId: 'team-b' }] }),
  );
});
afterAll(async () => {
  await h?.close();
});

describe('a function shared with another account', () => {
  it('shows containerArgs, containerEnvironment and secret names to its owner only', async () => {
    const path = `/v2/nvcf/functions/${fn.id}/versions/${fn.versionId}`;
    const owners = (await json<{ function: Dto }>(await call('GET', path, a))).function;
    expect(owners).toMatchObject({
      containerArgs: `serve --token ${CREDENTIAL}`,
      containerEnvironment: [{ key: 'UPSTREAM_TOKEN', value: CREDENTIAL }],
      secrets: ['DB_PASSWORD'],
      ownedByDifferentAccount: false,
    });

    // Every way B reads it: the version, the function's versions, the listings.
    const seen: unknown[] = [
      (await json<{ function: Dto }>(await call('GET', path, b))).function,
      (await json<{ function: Dto }>(await call('GET', `${path}?includeSecrets=true`, b))).function,
      ...(await json<{ functions: Dto[] }>(await call('GET', `/v2/nvcf/functions/${fn.id}/versions`, b))).functions,
      ...(await json<{ functions: Dto[] }>(await call('GET', '/v2/nvcf/functions?visibility=authorized', b))).functions,
      ...(await json<{ functions: Dto[] }>(await call('GET', '/v2/nvcf/functions', b))).functions,
    ];
    expect(seen).toHaveLength(5);
    for (const dto of seen) {
      expect(dto).toMatchObject({
        id: fn.id,
        ownedByDifferentAccount: true,
        inferenceUrl: '/echo',
        containerEnvironment: [],
      });
      expect(dto).not.toHaveProperty('containerArgs');
      expect(dto).not.toHaveProperty('secrets');
      expect(dto).not.toHaveProperty('secretNames');
      expect(JSON.stringify(dto)).not.toContain(CREDENTIAL);
      expect(JSON.stringify(dto)).not.toContain('DB_PASSWORD');
    }
  });
});
