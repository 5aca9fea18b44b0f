import type { CoreInferResponse, InferCall, InferenceCore } from '@nvcf/inference-server';
import { encodeHttpInferResponse } from '@nvcf/protocol';
import type { EventStream, InvocationResult } from '@nvcf/queue';

/** One response as KServe V2 JSON, marked as Triton marks a decoupled model's responses. */
function responseJson(res: CoreInferResponse, final: boolean): string {
  const body = encodeHttpInferResponse({
    model_name: res.modelName,
    model_version: res.modelVersion,
    ...(res.id !== undefined ? { id: res.id } : {}),
    parameters: { ...res.parameters, triton_final_response: final },
    outputs: res.outputs,
  }).body;
  return body.toString('utf8');
}

/**
 * A decoupled model's request through the queue (Triton's decoupled transaction policy). Streaming (SSE), each
 * response is an event as soon as the model makes it (KServe V2 JSON with `triton_final_response: false`), and an
 * empty response with `triton_final_response: true` closes the stream, as Triton's empty final response does.
 * Not streaming, the answer is every response in one JSON document, `{"responses": [...]}`, in the order made.
 */
export async function runDecoupled(
  core: InferenceCore,
  call: InferCall,
  requestId: string,
  stream: { events: EventStream } | undefined,
): Promise<InvocationResult> {
  const made: string[] = [];
  // Appends leave one at a time, in order, while the model goes on.
  let appended: Promise<unknown> = Promise.resolve();
  await core.inferDecoupled(call.request, (res) => {
    const json = responseJson(res, false);
    if (stream) appended = appended.then(() => stream.events.append(requestId, [{ data: json }]));
    else made.push(json);
  });
  await appended;
  const { request } = call;
  if (stream) {
    const final = JSON.stringify({
      model_name: request.modelName,
      model_version: request.modelVersion ?? '',
      ...(request.id !== undefined ? { id: request.id } : {}),
      parameters: { triton_final_response: true },
      outputs: [],
    });
    await stream.events.append(requestId, [{ data: final, last: true }]);
    const note = { id: requestId, streamed: true, detail: 'a decoupled model: answered as server-sent events' };
    return { status: 200, contentType: 'application/json', body: Buffer.from(JSON.stringify(note)) };
  }
  return { status: 200, contentType: 'application/json', body: Buffer.from(`{"responses":[${made.join(',')}]}`) };
}
