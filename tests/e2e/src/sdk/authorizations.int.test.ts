import { NvcfClient, NvcfError } from '@nvcf/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness, verId } from '../harness.ts';

let h: Harness;
let owner: NvcfClient;
let teamB: NvcfClient;
const fid = fnId('simple');
const vid = verId('simple');

beforeAll(async () => {
  h = await createHarness();
  // Publishes the repository's functions (the gateway's own account's), then leaves: no invocation here.
  await (await h.worker()).close();
  const baseUrl = (await h.gateway()).url;
  owner = new NvcfClient({ baseUrl, apiKey: ADMIN_KEY });
  // A second account, made by the operator.
  const { key, value } = await owner.keys.create({
    name: 'team-b',
    scopes: ['list_functions', 'authorize_clients'],
    ncaId: 'team-b',
  });
  expect(key.ncaId).toBe('team-b');
  teamB = new NvcfClient({ baseUrl, apiKey: value });
});
afterAll(async () => {
  await h?.close();
});

async function refusal(call: Promise<unknown>): Promise<NvcfError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NvcfError);
  return err as NvcfError;
}

describe('functions.authorizations', () => {
  it('shares a function with another account, which then lists it as authorized; unshares it', async () => {
    const auth = owner.functions.authorizations;
    expect((await teamB.functions.list()).map((f) => f.id)).not.toContain(fid);
    // Nothing to add to yet: `add` is refused as NVCF refuses it, `share` sets.
    expect((await refusal(auth.add(fid, 'team-b'))).status).toBe(404);
    await auth.share(fid, 'team-b');
    await auth.share(fid, 'team-b'); // again: no change
    expect(await auth.list(fid)).toEqual([
      { id: fid, ncaId: 'self-hosted', versionId: vid, authorizedParties: [{ ncaId: 'team-b' }] },
    ]);
    expect((await refusal(auth.add(fid, 'team-b'))).status).toBe(409);

    const shared = await teamB.functions.list({ visibility: ['authorized'] });
    expect(shared.map((f) => [f.id, f.ownedByDifferentAccount])).toEqual([[fid, true]]);
    expect(await teamB.functions.listIds({ visibility: ['private'] })).toEqual([]);
    // It invokes; it manages nothing.
    expect((await refusal(teamB.functions.authorizations.list(fid))).status).toBe(403);

    await auth.share(fid, 'team-c', { versionId: vid });
    expect((await auth.get(fid, vid)).authorizedParties).toEqual([{ ncaId: 'team-b' }, { ncaId: 'team-c' }]);
    expect((await auth.unshare(fid, 'team-b')).authorizedParties).toEqual([]);
    expect((await refusal(auth.remove(fid, 'team-b'))).status).toBe(404);
    expect(await teamB.functions.list({ visibility: ['authorized'] })).toEqual([]);
    expect((await auth.clear(fid, { versionId: vid })).authorizedParties).toEqual([]);

    expect((await auth.set(fid, ['team-z', { ncaId: 'team-y' }])).authorizedParties).toEqual([
      { ncaId: 'team-y' },
      { ncaId: 'team-z' },
    ]);
    expect((await auth.clear(fid)).authorizedParties).toEqual([]);
    const unknown = '00000000-0000-4000-8000-00000000dead';
    expect((await refusal(auth.share(unknown, 'team-b'))).status).toBe(404);
  });
});
