import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InferenceCore } from '@nvcf/inference-server';
import { startInferenceCore } from '@nvcf/inference-server';
import { generateExampleRepository } from '@nvcf/models';
import { createLogger } from '@nvcf/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDecoupled } from './decoupled-runner.ts';
import type { JobInput } from './job-input.ts';
import { completionCall } from './openai-completions.ts';

let dir: string;
let core: InferenceCore;

/** What the worker does with an OpenAI request to the generative function, without a stream. */
async function complete(
  requestId: string,
  input: JobInput,
  reportProgress?: (percent: number, partial: Buffer) => Promise<unknown>,
) {
  const { request, rendering } = completionCall(input, { name: 'generative', takesMaxTokens: true }, requestId);
  return runDecoupled(core, request, { requestId, ...(reportProgress ? { reportProgress } : {}) }, rendering);
}

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

describe('an OpenAI request to the generative function, without a stream', () => {
  it('reports progress with the text so far, then answers one chat.completion for messages', async () => {
    const reports: { pct: number; content: string }[] = [];
    const res = await complete(
      'r1',
      { kind: 'json', value: { messages: [{ role: 'user', content: 'H' }], max_tokens: 200 } },
      async (pct, partial) => {
        reports.push({ pct, content: (JSON.parse(partial.toString()) as { content: string }).content });
      },
    );
    expect(reports.map((r) => r.pct)).toEqual([32, 64, 96]);
    expect(reports.map((r) => r.content.length)).toEqual([64, 128, 192]);
    const body = JSON.parse(res.body.toString()) as { object: string; choices: { message: { content: string } }[] };
    expect(body.object).toBe('chat.completion');
    const text = body.choices[0]?.message.content ?? '';
    expect(text).toHaveLength(200);
    expect(text.startsWith(reports[0]?.content ?? 'x')).toBe(true);
  });

  it("answers a prompt (garak's NVCF completion request) in OpenAI's completions shape", async () => {
    const res = await complete('r3', {
      kind: 'json',
      value: { prompt: 'H', temperature: 0.7, top_p: 0.7, max_tokens: 9, stream: false },
    });
    expect(JSON.parse(res.body.toString())).toMatchObject({
      id: 'r3',
      object: 'text_completion',
      model: 'generative',
      choices: [{ index: 0, text: 'i,NVCF! H', logprobs: null, finish_reason: 'length' }],
      usage: { prompt_tokens: 1, completion_tokens: 9, total_tokens: 10 },
    });
  });

  it('refuses a body that is neither a prompt nor messages', async () => {
    await expect(complete('r4', { kind: 'json', value: { max_tokens: 4 } })).rejects.toThrow(
      /a prompt or messages is required/,
    );
  });

  it('refuses a body that is not a completion request', async () => {
    await expect(complete('r2', { kind: 'json', value: { max_tokens: 'many' } })).rejects.toThrow(
      /invalid completion request/,
    );
  });
});
