/**
 * Test helper (only *.int.test.ts import it): raw v1 HTTP calls as the old clients make them, and decoding of
 * their answers with the project's own v1 protobuf definitions.
 */
import { parseV1Text } from '../triton-v1/v1-codec.ts';
import type { InferResponseHeaderMsg, RequestStatusMsg } from '../triton-v1/v1-messages.ts';

/** The `NV-Status` header of a response, text-parsed as the C++ client does. */
export function nvStatus(res: Response): RequestStatusMsg {
  const text = res.headers.get('nv-status');
  if (text === null) throw new Error(`${res.url}: no NV-Status header`);
  return parseV1Text('RequestStatus', text, 'NV-Status') as RequestStatusMsg;
}

/** `rows` copies of simple's request: INPUT0 = 0..15 then INPUT1 = ones, INT32 little-endian, INPUT0 rows first. */
export function simpleBody(rows = 1): Uint8Array {
  const input0 = Int32Array.from({ length: 16 * rows }, (_, i) => i % 16);
  const input1 = new Int32Array(16 * rows).fill(1);
  const body = new Uint8Array(128 * rows);
  body.set(new Uint8Array(input0.buffer), 0);
  body.set(new Uint8Array(input1.buffer), 64 * rows);
  return body;
}

/** An `NV-InferRequest` header for simple (TRTIS 1.x API). */
export const SIMPLE_HEADER =
  'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" } output { name: "OUTPUT0" } output { name: "OUTPUT1" }';

export interface V1InferAnswer {
  res: Response;
  status: RequestStatusMsg;
  /** NV-InferResponse, parsed. */
  header: InferResponseHeaderMsg;
  /** Each raw output's bytes, sized from the header as the C++ client does. */
  raw: Uint8Array[];
  /** Everything after the raw outputs: the InferResponseHeader again. */
  trailer: Uint8Array;
}

/** POSTs to `/api/infer/<path>` with `NV-InferRequest: header`; a non-200 throws with its NV-Status. */
export async function postV1Infer(
  url: string,
  path: string,
  header: string,
  body: Uint8Array,
  query = '',
): Promise<V1InferAnswer> {
  const res = await fetch(`${url}/api/infer/${path}${query}`, {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'content-type': 'application/octet-stream', 'NV-InferRequest': header },
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`infer ${path}: ${res.status} ${res.headers.get('nv-status')}`);
  const parsed = parseV1Text('InferResponseHeader', res.headers.get('nv-inferresponse') ?? '', 'NV-InferResponse');
  const inferHeader = parsed as unknown as InferResponseHeaderMsg;
  const raw: Uint8Array[] = [];
  let offset = 0;
  for (const output of inferHeader.output ?? []) {
    if (!output.raw) continue;
    const size = output.raw.batch_byte_size ?? 0;
    raw.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return { res, status: nvStatus(res), header: inferHeader, raw, trailer: bytes.subarray(offset) };
}

export const int32sOf = (b: Uint8Array): number[] => [...new Int32Array(Uint8Array.from(b).buffer)];
export const float32sOf = (b: Uint8Array): number[] => [...new Float32Array(Uint8Array.from(b).buffer)];
