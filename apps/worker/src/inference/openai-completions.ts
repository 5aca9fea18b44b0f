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

/**
 * Whether a job is an OpenAI completion request: a JSON body that is not a KServe V2 request (no `inputs`) to a
 * model with the text interface of Triton's LLM backends (`text_input` in, `text_output` out). The body is looked at
 * first, so a KServe job never builds the model's metadata. Says whether the model also takes `max_tokens`.
 */
export function completionRequestTo(
  input: JobInput,
  metadata: () => ModelMetadata,
): { takesMaxTokens: boolean } | undefined {
  const value = input.kind === 'json' ? input.value : undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'inputs' in value) return undefined;
  const { inputs, outputs } = metadata();
  const takesText =
    inputs.some((t) => t.name === 'text_input' && t.datatype === 'BYTES') &&
    outputs.some((t) => t.name === 'text_output' && t.datatype === 'BYTES');
  return takesText ? { takesMaxTokens: inputs.some((t) => t.name === 'max_tokens') } : undefined;
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

  const created = () => Math.floor(Date.now() / 1000);
  /** One streamed piece of the answer (`content` null: the closing chunk with the finish reason). */
  const chunk = (content: string | null, finish: string | null): string => {
    if (shape === 'completions') {
      const choice = { index: 0, text: content ?? '', logprobs: null, finish_reason: finish };
      return JSON.stringify({
        id: requestId,
        object: 'text_completion',
        created: created(),
        model: model.name,
        choices: [choice],
      });
    }
    const choice = { index: 0, delta: content === null ? {} : { content }, finish_reason: finish };
    return JSON.stringify({
      id: requestId,
      object: 'chat.completion.chunk',
      created: created(),
      model: model.name,
      choices: [choice],
    });
  };
  const finishReason = (cancelled: boolean) => (cancelled ? 'cancelled' : 'length');

  const rendering: DecoupledRendering = {
    event: (response) => chunk(textOf(response), null),
    closing: (cancelled) => [chunk(null, finishReason(cancelled)), '[DONE]'],
    result(responses, { cancelled }) {
      const text = responses.map(textOf).join('');
      const finish = finishReason(cancelled);
      const completionTokens = text.length;
      const usage = {
        prompt_tokens: promptBytes.length,
        completion_tokens: completionTokens,
        total_tokens: promptBytes.length + completionTokens,
      };
      const body =
        shape === 'completions'
          ? {
              id: requestId,
              object: 'text_completion',
              created: created(),
              model: model.name,
              choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
              usage,
            }
          : {
              id: requestId,
              object: 'chat.completion',
              created: created(),
              model: model.name,
              choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }],
              usage,
            };
      return successResult({ contentType: 'application/json', body: Buffer.from(JSON.stringify(body)) });
    },
    progress(responses) {
      if (responses.length % PROGRESS_EVERY !== 0) return undefined;
      // A poll in between answers 202 with how far it got and the text so far (NVCF behaviour: progress).
      const partial = {
        id: requestId,
        object: shape === 'chat' ? 'chat.completion.partial' : 'text_completion.partial',
        content: responses.map(textOf).join(''),
      };
      const percent = Math.floor((responses.length / maxTokens) * 100);
      return { percent, partial: Buffer.from(JSON.stringify(partial)) };
    },
  };
  return { request, rendering };
}
