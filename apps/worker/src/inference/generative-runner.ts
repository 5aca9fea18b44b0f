import { AppError } from '@nvcf/protocol';
import type { EventStream, InvocationInput, InvocationResult } from '@nvcf/queue';
import { z } from 'zod';
import type { InferenceCore } from '../inference-server/core-types.ts';

/** An OpenAI-style completion request (what NVCF's LLM functions take): a prompt or chat messages. */
const GenerateRequest = z.object({
  prompt: z.string().optional(),
  messages: z.array(z.object({ role: z.string(), content: z.string() })).optional(),
  max_tokens: z.number().int().min(1).max(4096).default(16),
});

/** Tokens between progress reports when the client polls instead of streaming. */
const PROGRESS_EVERY = 64;

const chunk = (id: string, model: string, content: string | null, finish: string | null) =>
  JSON.stringify({
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }],
  });

/**
 * Greedy decoding with a byte-level next-token model (`TOKEN` INT64 [1] → `LOGITS` FP32 [1,256]): one
 * model run per token. Streaming, each token is an event in OpenAI's chunk shape as soon as it exists,
 * then `[DONE]`; it stops early when the client went away. Not streaming, the whole completion is one
 * `chat.completion` answer.
 */
export async function runGenerative(
  core: InferenceCore,
  model: { name: string; version: string },
  requestId: string,
  input: InvocationInput,
  stream: { events: EventStream } | undefined,
  progress?: (percent: number, partial: Buffer) => Promise<unknown>,
): Promise<InvocationResult> {
  if (input.kind !== 'json') throw new AppError('INVALID_ARGUMENT', 'a generative function takes a JSON body');
  const parsed = GenerateRequest.safeParse(input.value);
  if (!parsed.success)
    throw new AppError('INVALID_ARGUMENT', `invalid completion request: ${parsed.error.issues[0]?.message}`);
  const prompt = parsed.data.prompt ?? parsed.data.messages?.map((m) => m.content).join('\n') ?? '';
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
      await stream.events.append(requestId, [{ data: chunk(requestId, model.name, String.fromCharCode(best), null) }]);
    } else if (progress && (i + 1) % PROGRESS_EVERY === 0) {
      // A poll in between answers 202 with how far it got and the text so far (nvcf-api.md §12.3).
      const partial = {
        id: requestId,
        object: 'chat.completion.partial',
        content: Buffer.from(out).toString('latin1'),
      };
      await progress(Math.floor(((i + 1) / parsed.data.max_tokens) * 100), Buffer.from(JSON.stringify(partial)));
    }
  }
  const text = Buffer.from(out).toString('latin1');
  if (stream) {
    await stream.events.append(requestId, [
      { data: chunk(requestId, model.name, null, finish) },
      { data: '[DONE]', last: true },
    ]);
  }
  const body = {
    id: requestId,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: model.name,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }],
    usage: {
      prompt_tokens: promptBytes.length,
      completion_tokens: out.length,
      total_tokens: promptBytes.length + out.length,
    },
  };
  return { status: 200, contentType: 'application/json', body: Buffer.from(JSON.stringify(body)) };
}
