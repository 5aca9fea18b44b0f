import type { CoreInferRequest, CoreInferResponse, ModelMetadata } from '@nvcf/inference-server';
import { AppError, type Tensor } from '@nvcf/protocol';
import { successResult } from '@nvcf/queue';
import { z } from 'zod';
import type { DecoupledRendering } from './decoupled-runner.ts';
import type { JobInput } from './job-input.ts';

/**
 * An OpenAI-style request, as NVCF's LLM functions take them: chat (`messages`) or completions (`prompt`).
 * Sampling settings clients send (`temperature`, `top_p`, `stream`, …) are accepted; the model decides how it
 * decodes.
 */
const CompletionRequest = z
  .object({
    prompt: z.string().optional(),
    messages: z.array(z.object({ role: z.string(), content: z.string() })).optional(),
    max_tokens: z.number().int().min(1).max(4096).default(16),
  })
  .refine((r) => r.prompt !== undefined || r.messages !== undefined, 'a prompt or messages is required');

/** Tokens between progress reports when the client polls instead of streaming. */
const PROGRESS_EVERY = 64;

/** Which OpenAI API the request spoke: its answer takes the same shape. */
type Shape = 'chat' | 'completions';

/** A model with the text interface of Triton's LLM backends, and whether it also takes `max_tokens`. */
export interface TextGeneration {
  takesMaxTokens: boolean;
}

/**
 * Whether a model has the text interface of Triton's LLM backends (`text_input` in, `text_output` out), so it answers
 * OpenAI completion requests. Known from its metadata once, when its version starts being served.
 */
export function textGenerationOf(metadata: ModelMetadata): TextGeneration | undefined {
  const { inputs, outputs } = metadata;
  const takesText =
    inputs.some((t) => t.name === 'text_input' && t.datatype === 'BYTES') &&
    outputs.some((t) => t.name === 'text_output' && t.datatype === 'BYTES');
  return takesText ? { takesMaxTokens: inputs.some((t) => t.name === 'max_tokens') } : undefined;
}

/**
 * Whether a job to a text generation model is an OpenAI completion request: a JSON body that is not a KServe V2
 * request (no `inputs`). Only the job's body tells; a KServe request goes to the model as any other model's does.
 */
export function isCompletionBody(input: JobInput): boolean {
  const value = input.kind === 'json' ? input.value : undefined;
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !('inputs' in value);
}

/** The text one response carries (`text_output`, bytes as Latin-1: one character per byte-level token). */
const textOf = (response: CoreInferResponse): string => {
  const out = response.outputs.find((t) => t.name === 'text_output');
  return out?.datatype === 'BYTES'
    ? (out.data as Uint8Array[]).map((b) => Buffer.from(b).toString('latin1')).join('')
    : '';
};

/**
 * An OpenAI chat or completions request as a request to a text generation model, and its rendering: streamed, each
 * response is a `chat.completion.chunk` (or a `text_completion` chunk), then a chunk with the finish reason, then
 * `[DONE]`; not streamed, the whole text is one `chat.completion` (or `text_completion`) with `usage`, and a poll in
 * between sees the text so far every 64 tokens.
 *
 * @throws AppError INVALID_ARGUMENT for a body that is not a chat or completions request.
 */
export function completionCall(
  input: JobInput,
  model: { name: string; version?: string; takesMaxTokens: boolean },
  requestId: string,
): { request: CoreInferRequest; rendering: DecoupledRendering } {
  const parsed = CompletionRequest.safeParse(input.kind === 'json' ? input.value : undefined);
  if (!parsed.success) {
    throw new AppError('INVALID_ARGUMENT', `invalid completion request: ${parsed.error.issues[0]?.message}`);
  }
  const { messages, prompt, max_tokens: maxTokens } = parsed.data;
  const shape: Shape = messages ? 'chat' : 'completions';
  const promptBytes = Buffer.from(messages?.map((m) => m.content).join('\n') ?? prompt ?? '');
  const inputs: Tensor[] = [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: [promptBytes] }];
  if (model.takesMaxTokens) {
    inputs.push({ name: 'max_tokens', datatype: 'INT32', shape: [1], data: Int32Array.of(maxTokens) });
  }
  const request: CoreInferRequest = {
    modelName: model.name,
    ...(model.version !== undefined ? { modelVersion: model.version } : {}),
    inputs,
  };
  const answer = { shape, model: model.name, requestId, promptTokens: promptBytes.length, maxTokens };
  return { request, rendering: completionRendering(answer) };
}

/** What a completion's answers say besides the text: the API spoken, the model, the request, the token counts. */
interface CompletionAnswer {
  shape: Shape;
  model: string;
  requestId: string;
  promptTokens: number;
  maxTokens: number;
}

const created = () => Math.floor(Date.now() / 1000);
const finishReason = (cancelled: boolean) => (cancelled ? 'cancelled' : 'length');

/** One streamed piece of the answer (`content` null: the closing chunk with the finish reason). */
function chunk(a: CompletionAnswer, content: string | null, finish: string | null): string {
  if (a.shape === 'completions') {
    const choice = { index: 0, text: content ?? '', logprobs: null, finish_reason: finish };
    return JSON.stringify({
      id: a.requestId,
      object: 'text_completion',
      created: created(),
      model: a.model,
      choices: [choice],
    });
  }
  const choice = { index: 0, delta: content === null ? {} : { content }, finish_reason: finish };
  return JSON.stringify({
    id: a.requestId,
    object: 'chat.completion.chunk',
    created: created(),
    model: a.model,
    choices: [choice],
  });
}

/** The whole text as one `chat.completion` (or `text_completion`), with `usage`. */
function wholeAnswer(a: CompletionAnswer, text: string, finish: string): object {
  const completionTokens = text.length;
  const usage = {
    prompt_tokens: a.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: a.promptTokens + completionTokens,
  };
  return a.shape === 'completions'
    ? {
        id: a.requestId,
        object: 'text_completion',
        created: created(),
        model: a.model,
        choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
        usage,
      }
    : {
        id: a.requestId,
        object: 'chat.completion',
        created: created(),
        model: a.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }],
        usage,
      };
}

function completionRendering(a: CompletionAnswer): DecoupledRendering {
  return {
    event: (response) => chunk(a, textOf(response), null),
    closing: (cancelled) => [chunk(a, null, finishReason(cancelled)), '[DONE]'],
    result(responses, { cancelled }) {
      const body = wholeAnswer(a, responses.map(textOf).join(''), finishReason(cancelled));
      return successResult({ contentType: 'application/json', body: Buffer.from(JSON.stringify(body)) });
    },
    progress(responses) {
      if (responses.length % PROGRESS_EVERY !== 0) return undefined;
      // A poll in between answers 202 with how far it got and the text so far (NVCF behaviour: progress).
      const partial = {
        id: a.requestId,
        object: a.shape === 'chat' ? 'chat.completion.partial' : 'text_completion.partial',
        content: responses.map(textOf).join(''),
      };
      const percent = Math.floor((responses.length / a.maxTokens) * 100);
      return { percent, partial: Buffer.from(JSON.stringify(partial)) };
    },
  };
}
