import { randomUUID } from 'node:crypto';
import type { FunctionAuthorizations, FunctionModelSpec, FunctionVersion } from '@nvcf/control-store';
import { describe, expect, it } from 'vitest';
import { modelFunctionVersion } from './model-functions.ts';
import { repositoryModelAccess } from './repository-model-access.ts';

type ModelVersion = FunctionVersion & { model: FunctionModelSpec };

const meta = { name: 'simple', versions: ['1'], platform: 'onnxruntime_onnx', inputs: [], outputs: [] };
const withModel = (fv: FunctionVersion): ModelVersion => {
  if (!fv.model) throw new Error(`${fv.name} has no model`);
  return { ...fv, model: fv.model };
};
/** What a worker of account `self-hosted` publishes for `simple` version 1. */
const publisher = withModel(modelFunctionVersion(meta, '1', 'self-hosted'));
/** A deployed function of `ncaId` built on `simple` version 1. */
const builtBy = (ncaId: string): ModelVersion => ({
  ...publisher,
  id: randomUUID(),
  versionId: randomUUID(),
  name: `of-${ncaId}`,
  ncaId,
  deployment: { minInstances: 1, maxInstances: 1, maxRequestConcurrency: 1, specifications: [] },
});
/** The authorizations of the publishing function only: any other read is a mistake the test should see. */
const partiesOf = (parties: FunctionAuthorizations) => {
  const reads: string[] = [];
  return {
    reads,
    get: async (functionId: string) => {
      reads.push(functionId);
      if (functionId !== publisher.id) throw new Error(`read the parties of ${functionId}`);
      return parties;
    },
  };
};
const none: FunctionAuthorizations = { function: [], versions: {} };

describe('repositoryModelAccess', () => {
  it('serves the publishing function and its own account’s functions without reading any parties', async () => {
    const own = builtBy('self-hosted');
    const store = partiesOf(none);
    const mayServe = await repositoryModelAccess([publisher, own], store);
    expect(mayServe(publisher)).toBe(true);
    expect(mayServe(own)).toBe(true);
    expect(store.reads).toEqual([]);
  });

  it('serves another account’s function only while the publishing function (or that version) is shared with it', async () => {
    const teamB = builtBy('team-b');
    const teamC = builtBy('team-c');
    const versions = [publisher, teamB, teamC];
    expect((await repositoryModelAccess(versions, partiesOf(none)))(teamB)).toBe(false);
    const shared = await repositoryModelAccess(versions, partiesOf({ function: [{ ncaId: 'team-b' }], versions: {} }));
    expect(shared(teamB)).toBe(true);
    expect(shared(teamC)).toBe(false);
    const version = { function: [], versions: { [publisher.versionId]: [{ ncaId: 'team-c' }] } };
    const store = partiesOf(version);
    const byVersion = await repositoryModelAccess(versions, store);
    expect(byVersion(teamC)).toBe(true);
    expect(byVersion(teamB)).toBe(false);
    // One read for the publishing function, however many versions name it.
    expect(store.reads).toEqual([publisher.id]);
  });

  it('still knows the publisher when an operator undeployed it, and serves nothing without a publisher', async () => {
    const undeployed = { ...publisher, deployment: null };
    const own = builtBy('self-hosted');
    expect((await repositoryModelAccess([undeployed, own], partiesOf(none)))(own)).toBe(true);
    const orphan = { ...builtBy('self-hosted'), model: { ...publisher.model, name: 'gone' } };
    expect((await repositoryModelAccess([publisher, orphan], partiesOf(none)))(orphan)).toBe(false);
  });
});
