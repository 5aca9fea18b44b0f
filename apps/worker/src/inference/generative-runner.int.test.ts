import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { createLogger } from '@nvcf/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceCore } from '../inference-server/core-types.ts';
import { startInferenceCore } from '../inference-server/create-core.ts';
import { runGenerative } from './generative-runner.ts';

let dir: string;
let core: InferenceCore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-gen-'));
  await generateExampleRepository(dir, { includeGenerative: true });
  core = await startInferenceCore(
    { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
    createLogger({ name: 'test', level: 'silent' }),
  );
});
afterAll(async () => {
  await core?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('generative runner without a stream', () => {
  it('reports progress with the text so far, then answers one chat.completion', async () => {
    const reports: { pct: number; content: string }[] = [];
    const res = await runGenerative(
      core,
      { name: 'generative', version: '1' },
      'r1',
      { kind: 'json', contentType: 'application/json', value: { prompt: 'H', max_tokens: 200 } },
      undefined,
      async (pct, partial) => {
        reports.push({ pct, content: (JSON.parse(partial.toString()) as { content: string }).content });
      },
    );
    expect(reports.map((r) => r.pct)).toEqual([32, 64, 96]);
    expect(reports.map((r) => r.content.length)).toEqual([64, 128, 192]);
    const body = JSON.parse(res.body.toString()) as { choices: { message: { content: string } }[] };
    const text = body.choices[0]?.message.content ?? '';
    expect(text).toHaveLength(200);
    expect(text.startsWith(reports[0]?.content ?? 'x')).toBe(true);
  });

  it('refuses a body that is not a completion request', async () => {
    await expect(
      runGenerative(
        core,
        { name: 'generative', version: '1' },
        'r2',
        { kind: 'json', contentType: 'application/json', value: { max_tokens: 'many' } },
        undefined,
      ),
    ).rejects.toThrow(/invalid completion request/);
  });
});
