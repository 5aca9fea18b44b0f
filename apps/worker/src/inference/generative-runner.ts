import type { InferenceCore } from '@nvcf/inference-server';
import { AppError } from '@nvcf/protocol';
import type { EventStream, InvocationResult } from '@nvcf/queue';
import { z } from 'zod';
import type { JobInput } from './job-input.ts';

/**
 * An OpenAI-style request, as NVCF's LLM functions take them: chat (`messages`) or completions
 * (`prompt`). Sampling settings clients send (`temperature`, `top_p`, `stream`, …) are accepted; this
 * example decodes greedily whatever they say.
 */
const GenerateRequest = z
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

/** One streamed piece of the answer (`content` null: the closing chunk with the finish reason). */
function chunk(shape: Shape, id: string, model: string, content: string | null, finish: string | null): string {
  const created = Math.floor(Date.now() / 1000);
  if (shape === 'completions') {
    const choice = { index: 0, text: content ?? '', logprobs: null, finish_reason: finish };
    return JSON.stringify({ id, object: 'text_completion', created, model, choices: [choice] });
  }
  const choice = { index: 0, delta: content === null ? {} : { content }, finish_reason: finish };
  return JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [choice] });
}

/** The whole answer: `chat.completion` (choices[].message) or `text_completion` (choices[].text). */
function completion(shape: Shape, id: string, model: string, text: string, finish: string, usage: object): string {
  const created = Math.floor(Date.now() / 1000);
  if (shape === 'completions') {
    const choice = { index: 0, text, logprobs: null, finish_reason: finish };
    return JSON.stringify({ id, object: 'text_completion', created, model, choices: [choice], usage });
  }
  const choice = { index: 0, message: { role: 'assistant', content: text }, finish_reason: finish };
  return JSON.stringify({ id, object: 'chat.completion', created, model, choices: [choice], usage });
}

/**
 * Greedy decoding with a byte-level next-token model (`TOKEN` INT64 [1] → `LOGITS` FP32 [1,256]): one
 * model run per token. Chat requests (`messages`) are answered in OpenAI's chat shape, `prompt`
 * requests in its completions shape. Streaming, each token is an event (a `chat.completion.chunk` or a
 * `text_completion` chunk) as soon as it exists, then `[DONE]`; it stops early when the client went
 * away. Not streaming, the whole answer is one `chat.completion` or `text_completion` with `usage`.
 */
export async function runGenerative(
  core: InferenceCore,
  model: { name: string; version: string },
  requestId: string,
  input: JobInput,
  stream: { events: EventStream } | undefined,
  progress?: (percent: number, partial: Buffer) => Promise<unknown>,
): Promise<InvocationResult> {
  if (input.kind !== 'json') throw new AppError('INVALID_ARGUMENT', 'a generative function takes a JSON body');
  const parsed = GenerateRequest.safeParse(input.value);
  if (!parsed.success)
    throw new AppError('INVALID_ARGUMENT', `invalid completion request: ${parsed.error.issues[0]?.message}`);
  const shape: Shape = parsed.data.messages ? 'chat' : 'completions';
  const prompt = parsed.data.messages?.map((m) => m.content).join('\n') ?? parsed.data.prompt ?? '';
  const promptBytes = Buffer.from(prompt);
  let token = BigInt(promptBytes.at(-1) ?? 0x48);
  const out: number[] = [];
  let finish = 'length';
  for (let i = 0; i < parsed.data.max_tokens; i++) {
    if (stream && (await stream.events.isCancelled(requestId))) {
      finish = 'cancelled';
      break;
    }
    const res = await core.infer({
      modelName: model.name,
      modelVersion: model.version,
      inputs: [{ name: 'TOKEN', datatype: 'INT64', shape: [1], data: BigInt64Array.from([token]) }],
    });
    const logits = res.outputs[0]?.data as Float32Array;
    let best = 0;
    for (let j = 1; j < logits.length; j++) if ((logits[j] as number) > (logits[best] as number)) best = j;
    out.push(best);
    token = BigInt(best);
    if (stream) {
      await stream.events.append(requestId, [
        { data: chunk(shape, requestId, model.name, String.fromCharCode(best), null) },
      ]);
    } else if (progress && (i + 1) % PROGRESS_EVERY === 0) {
      // A poll in between answers 202 with how far it got and the text so far (NVCF behaviour: progress).
      const partial = {
        id: requestId,
        object: shape === 'chat' ? 'chat.completion.partial' : 'text_completion.partial',
        content: Buffer.from(out).toString('latin1'),
      };
      await progress(Math.floor(((i + 1) / parsed.data.max_tokens) * 100), Buffer.from(JSON.stringify(partial)));
    }
  }
  const text = Buffer.from(out).toString('latin1');
  if (stream) {
    await stream.events.append(requestId, [
      { data: chunk(shape, requestId, model.name, null, finish) },
      { data: '[DONE]', last: true },
    ]);
  }
  const usage = {
    prompt_tokens: promptBytes.length,
    completion_tokens: out.length,
    total_tokens: promptBytes.length + out.length,
  };
  const body = completion(shape, requestId, model.name, text, finish, usage);
  return { status: 200, contentType: 'application/json', body: Buffer.from(body) };
}
