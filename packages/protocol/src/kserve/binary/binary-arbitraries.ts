/**
 * fast-check arbitraries for the binary codec tests (test-only: nothing in src imports it). Unlike
 * `tensor-arbitraries.ts` these cover what only binary can carry: BF16, any FP16 bit pattern, NaN
 * payloads, 64-bit integers beyond 2^53 and BYTES that are not UTF-8.
 */
import fc from 'fast-check';
import type { InferRequest } from '../infer-request-json.ts';
import type { InferResponse } from '../infer-response-json.ts';
import { DATATYPES, type Datatype, type Tensor, type TensorData } from '../tensor.ts';
import { product, shapeArb, tensorDataArb } from '../tensor-arbitraries.ts';

/** Byte strings: empty ones, UTF-8 text and arbitrary bytes (often invalid UTF-8). */
const byteStringArb = fc.oneof(
  fc.constant(new Uint8Array(0)),
  fc.string({ unit: 'binary', maxLength: 6 }).map((s) => new TextEncoder().encode(s)),
  fc.uint8Array({ maxLength: 6 }),
);

/** Storage for any datatype, holding every value that datatype's binary form can carry. */
export function binaryDataArb(datatype: Datatype, n: number): fc.Arbitrary<TensorData> {
  const len = { minLength: n, maxLength: n };
  switch (datatype) {
    case 'FP16':
    case 'BF16':
      return fc.uint16Array(len);
    case 'BYTES':
      return fc.array(byteStringArb, len);
    default:
      return tensorDataArb(datatype, n);
  }
}

/** A tensor of any datatype (name set by the caller); parameters absent or non-empty. */
export const anyTensorArb: fc.Arbitrary<Omit<Tensor, 'name'>> = fc
  .record({
    datatype: fc.constantFrom(...DATATYPES),
    shape: shapeArb,
    parameters: fc.option(fc.dictionary(fc.constantFrom('p', 'q'), fc.integer(), { minKeys: 1 }), { nil: undefined }),
  })
  .chain(({ datatype, shape, parameters }) =>
    binaryDataArb(datatype, product(shape)).map((data) =>
      parameters === undefined ? { datatype, shape, data } : { datatype, shape, data, parameters },
    ),
  );

/** 1..4 tensors with distinct names (unicode and quotes included, to exercise JSON escaping). */
export const namedTensorsArb: fc.Arbitrary<Tensor[]> = fc
  .uniqueArray(fc.string({ minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 })
  .chain((names) => fc.tuple(...names.map((name) => anyTensorArb.map((t): Tensor => ({ name, ...t })))));

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether JSON carries this tensor exactly. Requests refuse non-finite floats and 64-bit integers
 * beyond 2^53 (JSON.parse rounds them); responses carry those ("NaN" strings, exact digits) but
 * FP16 NaNs come back as the canonical 0x7e00.
 */
export function jsonCarries(tensor: Tensor, side: 'request' | 'response'): boolean {
  const { datatype, data } = tensor;
  switch (datatype) {
    case 'BF16':
      return false;
    case 'BYTES':
      return (data as Uint8Array[]).every(isUtf8);
    case 'FP16':
      return (data as Uint16Array).every((bits) =>
        (bits & 0x7c00) !== 0x7c00 ? true : side === 'response' && ((bits & 0x3ff) === 0 || bits === 0x7e00),
      );
    case 'FP32':
    case 'FP64':
      return side === 'response' || (data as Float32Array).every(Number.isFinite);
    case 'INT64':
    case 'UINT64':
      return (
        side === 'response' ||
        (data as BigInt64Array).every(
          (v) => v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER),
        )
      );
    default:
      return true;
  }
}

/** A request and, per input, whether it travels binary (forced where JSON cannot carry it). */
export const mixedRequestArb: fc.Arbitrary<{ req: InferRequest; binary: Set<string> }> = fc
  .record({
    inputs: namedTensorsArb,
    id: fc.option(fc.string(), { nil: undefined }),
    choice: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  })
  .map(({ inputs, id, choice }) => {
    const req: InferRequest = id === undefined ? { inputs } : { id, inputs };
    const binary = new Set(
      inputs.filter((t, i) => choice[i] === true || !jsonCarries(t, 'request')).map((t) => t.name),
    );
    return { req, binary };
  });

/** A response and an `outputBinary` choice; outputs JSON cannot carry are forced binary. */
export const mixedResponseArb: fc.Arbitrary<{
  res: InferResponse;
  binaryDataOutput: boolean | undefined;
  outputBinary: Map<string, boolean>;
}> = fc
  .record({
    outputs: namedTensorsArb,
    binaryDataOutput: fc.option(fc.boolean(), { nil: undefined }),
    choice: fc.array(fc.option(fc.boolean(), { nil: undefined }), { minLength: 4, maxLength: 4 }),
  })
  .map(({ outputs, binaryDataOutput, choice }) => {
    const outputBinary = new Map<string, boolean>();
    outputs.forEach((t, i) => {
      const c = choice[i];
      if (!jsonCarries(t, 'response')) outputBinary.set(t.name, true);
      else if (c !== undefined && c !== null) outputBinary.set(t.name, c);
    });
    return { res: { model_name: 'm', model_version: '1', outputs }, binaryDataOutput, outputBinary };
  });
