import { AppError, type Tensor } from '@nvcf/protocol';
import type { BuiltInModelEntry } from './identity-model.ts';
import type { LoadedModel, ModelHandle } from './onnx-runner.ts';
import { validateRequest } from './validate-request.ts';

/** Tokens a request may ask for (`max_tokens`), and what it gets when it names none. */
export const MAX_TOKENS_LIMIT = 4096;
export const DEFAULT_MAX_TOKENS = 16;
/** A byte-level vocabulary: token i is the byte i. */
const VOCABULARY = 256;
/** The token decoding starts from after an empty prompt. */
const EMPTY_PROMPT_TOKEN = 0x48;

/**
 * The built-in greedy_decoder backend: text generation with a byte-level next-token ONNX model (the version's
 * `model.onnx`: one INT64 token in, logits over the 256 bytes out). The client's side is the text interface of
 * Triton's LLM backends: `text_input` (BYTES [1]) and an optional `max_tokens` (INT32 [1], default 16, at most 4096)
 * in, `text_output` (BYTES [1]) out. Decoding starts from the prompt's last byte and picks the most likely next byte
 * each step (one run of the next-token model per token). Decoupled (the model's transaction policy), each token is
 * one response as soon as it exists; otherwise the whole text is the one response.
 *
 * @throws AppError INVALID_ARGUMENT at load unless the config has `text_input` (STRING), `text_output` (STRING) and
 *   at most `max_tokens` (INT32) besides, and the next-token model takes one INT64 and answers 256 FP32 logits.
 */
export function startGreedyDecoderModel(entry: BuiltInModelEntry, nextToken: ModelHandle): ModelHandle {
  const fail = (why: string): never => {
    throw new AppError('INVALID_ARGUMENT', `failed to load '${entry.name}' version ${entry.version}: ${why}`);
  };
  const io = (list: BuiltInModelEntry['inputs']) =>
    list
      .map((t) => `${t.name}:${t.datatype}`)
      .sort()
      .join(',');
  const inputs = io(entry.inputs);
  if (
    (inputs !== 'text_input:BYTES' && inputs !== 'max_tokens:INT32,text_input:BYTES') ||
    io(entry.outputs) !== 'text_output:BYTES'
  ) {
    fail(
      'the greedy_decoder backend takes text_input (TYPE_STRING) and optionally max_tokens (TYPE_INT32), and answers text_output (TYPE_STRING)',
    );
  }
  const step = nextToken.model;
  const [tokenIn] = step.inputs;
  const [logitsOut] = step.outputs;
  if (step.inputs.length !== 1 || tokenIn?.datatype !== 'INT64' || logitsOut?.datatype !== 'FP32') {
    fail('its model.onnx must take one INT64 token and answer FP32 logits');
  }
  if (logitsOut?.shape.at(-1) !== VOCABULARY) fail(`its model.onnx must answer ${VOCABULARY} logits (one per byte)`);
  const tokenShape = (tokenIn?.shape ?? [1]).map((d) => (d === -1 ? 1 : d));
  if (tokenShape.reduce((a, b) => a * b, 1) !== 1) fail('its model.onnx must take a single token');

  const signature = { inputs: entry.inputs, outputs: entry.outputs, unsupported: [] };
  /** The request's prompt and token budget, checked as Triton checks a request. */
  const parse = (given: Tensor[]): { prompt: Uint8Array; maxTokens: number } => {
    // max_tokens may be left out: check against the inputs actually given plus the required one.
    const required = {
      ...signature,
      inputs: entry.inputs.filter((i) => i.name === 'text_input' || given.some((t) => t.name === i.name)),
    };
    validateRequest(entry.name, required, given);
    const text = given.find((t) => t.name === 'text_input')?.data as Uint8Array[];
    const budget = given.find((t) => t.name === 'max_tokens')?.data[0];
    const maxTokens = budget === undefined ? DEFAULT_MAX_TOKENS : Number(budget);
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1 || maxTokens > MAX_TOKENS_LIMIT) {
      throw new AppError('INVALID_ARGUMENT', `max_tokens must be between 1 and ${MAX_TOKENS_LIMIT}, got ${maxTokens}`);
    }
    return { prompt: text[0] ?? new Uint8Array(0), maxTokens };
  };
  /** Runs the next-token model once per token, handing each byte on as it is chosen. */
  const decode = async (given: Tensor[], onToken: (byte: number) => void, signal?: AbortSignal) => {
    const { prompt, maxTokens } = parse(given);
    let token = BigInt(prompt.at(-1) ?? EMPTY_PROMPT_TOKEN);
    for (let i = 0; i < maxTokens; i++) {
      if (signal?.aborted) throw new AppError('CANCELLED', 'request cancelled');
      const tensor = {
        name: tokenIn?.name ?? '',
        datatype: 'INT64',
        shape: tokenShape,
        data: BigInt64Array.of(token),
      } as const;
      const [logits] = await step.run([tensor], [logitsOut?.name ?? '']);
      const scores = logits?.data as Float32Array;
      let best = 0;
      for (let j = 1; j < VOCABULARY; j++) if ((scores[j] as number) > (scores[best] as number)) best = j;
      token = BigInt(best);
      onToken(best);
    }
  };
  const textOutput = (bytes: Uint8Array): Tensor => ({
    name: 'text_output',
    datatype: 'BYTES',
    shape: [1],
    data: [bytes],
  });
  const model: LoadedModel = {
    name: entry.name,
    version: entry.version,
    provider: step.provider,
    inputs: entry.inputs,
    outputs: entry.outputs,
    unsupported: [],
    instances: step.instances,
    async run(given) {
      const text: number[] = [];
      await decode(given, (byte) => text.push(byte));
      return [textOutput(Uint8Array.from(text))];
    },
    async runDecoupled(given, emit, signal) {
      await decode(given, (byte) => emit([textOutput(Uint8Array.of(byte))]), signal);
    },
  };
  return { model, scale: (count) => nextToken.scale(count), release: () => nextToken.release() };
}
