import type { InvocationInput } from '@nvcf/queue';

/** Where an input travels: inside its job (`input`), in the queue entry beside it (`entryBytes`), or stored (`stored`). */
export interface PlacedInput {
  input: InvocationInput;
  stored?: Buffer;
  entryBytes?: Buffer;
}

/**
 * A container function gets the client's body as sent (NVCF forwards it to the inference server unchanged): JSON
 * was parsed only to refuse a malformed body at once, and travels as its bytes, not written again from the parse
 * (which would, say, round an integer past 2^53 or turn 1.50 into 1.5).
 */
export function verbatimInput(input: InvocationInput, body: Buffer | undefined): InvocationInput {
  if (input.kind !== 'json' || !body) return input;
  return { kind: 'entry', contentType: input.contentType };
}

/**
 * Small inputs travel inside their job; larger ones beside it (the enqueue's `input`), as the raw
 * bytes: a queue entry is copied whole to the worker that reads it, and should stay small.
 */
export function placeInput(input: InvocationInput, body: Buffer | undefined, maxJobInputBytes: number): PlacedInput {
  if (input.kind === 'stored') return { input };
  // A KServe request's tensors are raw bytes, never base64: small ones ride in the queue entry beside the job
  // (the worker gets them with it: no second read, no key), larger ones wait beside it.
  if (input.kind === 'kserve') {
    if (input.binaryBytes === 0 || !body) return { input };
    if (body.length <= maxJobInputBytes) {
      return { input: { ...input, inEntry: true }, entryBytes: body };
    }
    return { input, stored: body };
  }
  if (input.kind === 'entry') {
    if (!body) throw new Error('an entry input needs the request body');
    if (body.length <= maxJobInputBytes) return { input, entryBytes: body };
    return { input: { kind: 'stored', contentType: input.contentType, format: 'bytes' }, stored: body };
  }
  // Base64 inside the job is what gateways of earlier releases queued: none is made here.
  if (input.kind === 'bytes') return { input };
  const raw = body ?? Buffer.from(JSON.stringify(input.value));
  if (raw.length <= maxJobInputBytes) return { input };
  return { input: { kind: 'stored', contentType: input.contentType, format: 'json' }, stored: raw };
}

/**
 * The KServe request's JSON part, where its sequence flags are: the parsed body, a gRPC call's header, or the JSON
 * that opens a binary-extension body (`Inference-Header-Content-Length` bytes of it, tritonclient's default form).
 * Undefined when there is none or it does not parse: the worker refuses such a request with the reason.
 */
export function kserveHeaderOf(
  input: InvocationInput,
  headers: Record<string, string>,
  body: Buffer | undefined,
): unknown {
  if (input.kind === 'json') return input.value;
  if (input.kind === 'kserve') return input.header;
  const length = Number(headers['inference-header-content-length']);
  if (!body || !Number.isSafeInteger(length) || length <= 0 || length > body.length) return undefined;
  try {
    return JSON.parse(body.toString('utf8', 0, length));
  } catch {
    return undefined;
  }
}
