import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StartableCore, startInferenceCore } from '@nvcf/inference-server';
import { generateExampleRepository } from '@nvcf/models';
import { createEventStream, createKeys } from '@nvcf/queue';
import { usePrivateRedis } from '@nvcf/queue/testing';
import { createLogger } from '@nvcf/service-kit';
import { createLocalDirStore } from '@nvcf/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelJob } from './job-input.ts';
import { runnerFor } from './runner-for.ts';

const db = usePrivateRedis();
let dir: string;
let core: StartableCore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-runner-for-'));
  await generateExampleRepository(join(dir, 'models'), { includeGenerative: true });
  core = (await startInferenceCore(
    { modelRepository: join(dir, 'models'), executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
    createLogger({ name: 'test', level: 'silent' }),
  )) as StartableCore;
});
afterAll(async () => {
  await core?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A KServe JSON request to the generative model: a prompt and 3 tokens. */
function generativeJob(): ModelJob {
  const value = {
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1], data: ['H'] },
      { name: 'max_tokens', datatype: 'INT32', shape: [1], data: [3] },
    ],
  };
  return {
    requestId: randomUUID(),
    functionId: randomUUID(),
    versionId: randomUUID(),
    headers: {},
    input: { kind: 'json', value },
  };
}

/** The generative model's config as Triton's JSON, without its decoupled transaction policy. */
const WHOLE_ANSWER_CONFIG = {
  backend: 'greedy_decoder',
  max_batch_size: 0,
  input: [
    { name: 'text_input', data_type: 'TYPE_STRING', dims: [1] },
    { name: 'max_tokens', data_type: 'TYPE_INT32', dims: [1], optional: true },
  ],
  output: [{ name: 'text_output', data_type: 'TYPE_STRING', dims: [1] }],
};

describe("a model version's runner", () => {
  it('is chosen again when its model reloads with another transaction policy', async () => {
    const events = createEventStream(db.redis, createKeys(`runner-${randomUUID().slice(0, 8)}`), { ttlSeconds: 60 });
    const runner = runnerFor({
      core,
      model: { name: 'generative', version: '1' },
      store: { reportProgress: async () => true },
      objects: createLocalDirStore(join(dir, 'objects')),
      maxTensorElements: 1 << 20,
      streamChunkRows: 0,
    });
    const answerOf = async () => JSON.parse((await runner(generativeJob(), events)).result.body.toString()) as object;
    // Decoupled: its responses, in one document for a client that did not ask for a stream.
    expect(await answerOf()).toMatchObject({ responses: expect.any(Array) });

    // The same model reloaded without the policy (Triton's repository API with a config override): one answer.
    await core.loadModel('generative', { configOverride: JSON.stringify(WHOLE_ANSWER_CONFIG) });
    expect(core.isDecoupled('generative', '1')).toBe(false);
    expect(await answerOf()).toMatchObject({ model_name: 'generative', outputs: expect.any(Array) });
  });
});
