import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSimpleModel, GENERATIVE_CONFIG_PBTXT, writeGenerativeModel } from '@nvcf/models';
import type { Tensor } from '@nvcf/protocol';
import { createLogger } from '@nvcf/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreInferResponse, InferenceCore } from '../core/core-types.ts';
import { startInferenceCore } from '../core/create-core.ts';

let dir: string;
let core: InferenceCore;

/** A model directory holding the generative model's next-token ONNX file under another config. */
async function variant(name: string, config: string, onnx?: Uint8Array): Promise<void> {
  await mkdir(join(dir, name, '1'), { recursive: true });
  if (onnx) await writeFile(join(dir, name, '1', 'model.onnx'), onnx);
  else await copyFile(join(dir, 'generative', '1', 'model.onnx'), join(dir, name, '1', 'model.onnx'));
  await writeFile(join(dir, name, 'config.pbtxt'), config.replace('name: "generative"', `name: "${name}"`));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-decoder-'));
  await writeGenerativeModel(dir);
  // Not decoupled: the whole text is the one response.
  await variant(
    'generative_whole',
    GENERATIVE_CONFIG_PBTXT.replace('model_transaction_policy { decoupled: true }\n', ''),
  );
  // A config whose tensors are not the text interface.
  await variant('decoder_bad_io', GENERATIVE_CONFIG_PBTXT.replaceAll('text_output', 'OUT'));
  // A model file that is not a next-token model (simple: two INT32 inputs).
  await variant('decoder_bad_onnx', GENERATIVE_CONFIG_PBTXT, buildSimpleModel());
  core = await startInferenceCore(
    { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
    createLogger({ name: 'test', level: 'silent' }),
  );
});
afterAll(async () => {
  await core?.close();
  await rm(dir, { recursive: true, force: true });
});

const textInput = (text: string): Tensor => ({
  name: 'text_input',
  datatype: 'BYTES',
  shape: [1],
  data: [Buffer.from(text)],
});
const maxTokens = (n: number): Tensor => ({
  name: 'max_tokens',
  datatype: 'INT32',
  shape: [1],
  data: Int32Array.of(n),
});
const textOf = (r: CoreInferResponse) =>
  Buffer.from(((r.outputs[0]?.data ?? []) as Uint8Array[])[0] ?? []).toString('latin1');

async function collect(modelName: string, inputs: Tensor[], signal?: AbortSignal): Promise<CoreInferResponse[]> {
  const responses: CoreInferResponse[] = [];
  await core.inferDecoupled({ modelName, inputs, ...(signal ? { signal } : {}) }, (r) => responses.push(r));
  return responses;
}

describe('the greedy_decoder backend', () => {
  it('answers each token as its own response, from the prompt’s last byte, max_tokens of them (16 by default)', async () => {
    expect(core.isDecoupled('generative')).toBe(true);
    const five = await collect('generative', [textInput('say H'), maxTokens(5)]);
    expect(five.map(textOf)).toEqual(['i', ',', 'N', 'V', 'C']);
    expect(five.every((r) => r.outputs[0]?.name === 'text_output' && r.outputs[0].shape[0] === 1)).toBe(true);
    const byDefault = await collect('generative', [textInput('H')]);
    expect(byDefault.map(textOf).join('')).toBe('i,NVCF! Hi,NVCF!');
  });

  it('answers the whole text as one response when the config is not decoupled', async () => {
    expect(core.isDecoupled('generative_whole')).toBe(false);
    const res = await core.infer({ modelName: 'generative_whole', inputs: [textInput('H'), maxTokens(9)] });
    expect(textOf(res)).toBe('i,NVCF! H');
  });

  it('refuses bad requests with Triton-style errors before decoding', async () => {
    await expect(collect('generative', [textInput('H'), maxTokens(4097)])).rejects.toThrow(
      'max_tokens must be between 1 and 4096, got 4097',
    );
    await expect(collect('generative', [maxTokens(3)])).rejects.toThrow(/missing required input\(s\) \['text_input'\]/);
    const wrongType: Tensor = { name: 'text_input', datatype: 'INT32', shape: [1], data: Int32Array.of(1) };
    await expect(collect('generative', [wrongType])).rejects.toThrow(
      "inference input 'text_input' data-type is 'INT32', but model 'generative' expects 'BYTES'",
    );
  });

  it('stops between tokens once the caller went away', async () => {
    const stop = new AbortController();
    const responses: CoreInferResponse[] = [];
    const run = core.inferDecoupled(
      { modelName: 'generative', inputs: [textInput('H'), maxTokens(4096)], signal: stop.signal },
      (r) => {
        responses.push(r);
        if (responses.length === 3) stop.abort();
      },
    );
    await expect(run).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(responses).toHaveLength(3);
  });

  it('does not load a config without the text interface, or a model file that is not a byte-level next-token model', async () => {
    const index = await core.repositoryIndex();
    const reason = (name: string) => index.find((e) => e.name === name)?.reason ?? '';
    expect(index.find((e) => e.name === 'decoder_bad_io')?.state).toBe('UNAVAILABLE');
    expect(reason('decoder_bad_io')).toMatch(/greedy_decoder backend takes text_input .* and answers text_output/);
    expect(index.find((e) => e.name === 'decoder_bad_onnx')?.state).toBe('UNAVAILABLE');
    expect(reason('decoder_bad_onnx')).toMatch(/must take one INT64 token and answer FP32 logits/);
  });
});
