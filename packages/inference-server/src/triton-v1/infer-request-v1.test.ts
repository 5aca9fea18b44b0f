import { parseModelConfigText, SIMPLE_CONFIG_PBTXT } from '@nvcf/models';
import { AppError, type Tensor } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { decodeV1InferRequest, type V1RawInputs } from './infer-request-v1.ts';
import type { InferRequestHeaderMsg } from './v1-messages.ts';

const simple = parseModelConfigText(SIMPLE_CONFIG_PBTXT);
const words = parseModelConfigText(`name: "words" max_batch_size: 0
input [{ name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] }]
output [{ name: "LEN" data_type: TYPE_INT32 dims: [ -1, 2 ] }]`);

const int32s = (n: number, start = 0) => new Uint8Array(Int32Array.from({ length: n }, (_, i) => start + i).buffer);
const both = (rows = 1) => {
  const body = new Uint8Array(128 * rows);
  body.set(int32s(16 * rows), 0);
  body.set(int32s(16 * rows, 100), 64 * rows);
  return body;
};
const header = (extra: InferRequestHeaderMsg = {}): InferRequestHeaderMsg => ({
  batch_size: 1,
  input: [{ name: 'INPUT0' }, { name: 'INPUT1' }],
  output: [{ name: 'OUTPUT0' }],
  ...extra,
});
const decode = (h: InferRequestHeaderMsg, raw: V1RawInputs = both(), config = simple) =>
  decodeV1InferRequest(config, { name: config.name }, h, raw, 1 << 20);
const failure = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a failure');
};

describe('decodeV1InferRequest', () => {
  it('cuts the body in header order into [batch, ...dims] tensors', () => {
    const plan = decode(header({ batch_size: 2, input: [{ name: 'INPUT1' }, { name: 'INPUT0' }] }), both(2));
    expect(plan.batchSize).toBe(2);
    expect(plan.request.inputs.map((t: Tensor) => [t.name, t.shape, (t.data as Int32Array)[0]])).toEqual([
      ['INPUT1', [2, 16], 0],
      ['INPUT0', [2, 16], 100],
    ]);
    expect(plan.request.outputs).toEqual([{ name: 'OUTPUT0' }]);
  });

  it('maps cls to the core classification, id and sequence fields to request fields', () => {
    const plan = decode(
      header({ output: [{ name: 'OUTPUT1', cls: { count: 3 } }], id: 9, correlation_id: 5, flags: 3, priority: 2 }),
    );
    expect(plan.outputs).toEqual([{ name: 'OUTPUT1', classes: 3 }]);
    expect(plan.request).toMatchObject({
      id: '9',
      outputs: [{ name: 'OUTPUT1', classification: 3 }],
      parameters: { sequence_id: 5, sequence_start: true, sequence_end: true, priority: 2 },
    });
  });

  it('takes gRPC raw_input entries one per input', () => {
    const plan = decode(header(), [int32s(16), int32s(16)]);
    expect(plan.request.inputs).toHaveLength(2);
    expect(failure(() => decode(header(), [int32s(16)])).message).toBe(
      'expected 2 raw_input entries (one per meta_data input), got 1',
    );
    expect(failure(() => decode(header(), [int32s(16), int32s(15)])).message).toBe(
      "raw_input[1] (input 'INPUT1') has 60 bytes, expected 64",
    );
  });

  it('checks batch_byte_size and the body length', () => {
    const wrong = header({ input: [{ name: 'INPUT0', batch_byte_size: 60 }, { name: 'INPUT1' }] });
    expect(failure(() => decode(wrong)).message).toBe(
      "input 'INPUT0': batch_byte_size 60 does not match the 64 bytes that shape [1,16] of INT32 needs",
    );
    expect(decode(header({ input: [{ name: 'INPUT0', batch_byte_size: 64 }, { name: 'INPUT1' }] })).batchSize).toBe(1);
    expect(failure(() => decode(header(), both().subarray(0, 100))).message).toBe(
      'the request body has 100 bytes, but the NV-InferRequest inputs need 128 (INPUT0 64 + INPUT1 64)',
    );
    expect(failure(() => decode(header(), new Uint8Array(129))).code).toBe('INVALID_ARGUMENT');
  });

  it('reads the pre-1.0 byte_size as the size of one batch item', () => {
    const h = header({
      batch_size: 2,
      input: [
        { name: 'INPUT0', byte_size: 64 },
        { name: 'INPUT1', byte_size: 64 },
      ],
    });
    expect(decode(h, both(2)).batchSize).toBe(2);
    const bad = header({ batch_size: 2, input: [{ name: 'INPUT0', byte_size: 128 }, { name: 'INPUT1' }] });
    expect(failure(() => decode(bad, both(2))).message).toMatch(/batch_byte_size 256 does not match the 128 bytes/);
  });

  it('refuses bad batch sizes, names and shared memory', () => {
    const cases: [InferRequestHeaderMsg, string][] = [
      [header({ batch_size: 0 }), "inference request batch-size must be >= 1 for 'simple', got 0"],
      [header({ batch_size: 9 }), "inference request batch-size must be <= 8 for 'simple'"],
      [
        header({ input: [{ name: 'INPUT0' }, { name: 'NOPE' }] }),
        "unexpected inference input 'NOPE' for model 'simple'",
      ],
      [
        header({ input: [{ name: 'INPUT0' }, { name: 'INPUT0' }] }),
        "input 'INPUT0' is given more than once in the request header",
      ],
      [
        header({ input: [{ name: 'INPUT0' }] }),
        "expected 2 inputs but got 1 inputs for model 'simple': missing 'INPUT1'",
      ],
      [header({ output: [{ name: 'OUTPUT9' }] }), "unexpected inference output 'OUTPUT9' for model 'simple'"],
      [header({ output: [{ name: 'OUTPUT0' }, { name: 'OUTPUT0' }] }), "output 'OUTPUT0' is requested more than once"],
      [header({ output: [{ name: 'OUTPUT0', cls: {} }] }), "output 'OUTPUT0': cls.count must be at least 1"],
      [
        header({ input: [{ name: 'INPUT0', dims: [8] }, { name: 'INPUT1' }] }),
        "input 'INPUT0': dims [8] do not match the model config's dims [16]",
      ],
    ];
    for (const [h, message] of cases) {
      const err = failure(() => decode(h));
      expect([err.code, err.message]).toEqual(['INVALID_ARGUMENT', message]);
    }
    const shm = failure(() =>
      decode(header({ input: [{ name: 'INPUT0', shared_memory: { name: 'r' } }, { name: 'INPUT1' }] })),
    );
    expect([shm.code, shm.message]).toEqual([
      'UNIMPLEMENTED',
      "input 'INPUT0': shared memory is not supported by this server",
    ]);
  });

  it('needs dims for variable dimensions and batch_byte_size for STRING; non-batching shapes have no batch', () => {
    const text = new Uint8Array([2, 0, 0, 0, 104, 105, 0, 0, 0, 0]);
    const h = (input: InferRequestHeaderMsg['input']) => ({ batch_size: 1, input, output: [{ name: 'LEN' }] });
    const plan = decode(h([{ name: 'TEXT', dims: [2], batch_byte_size: 10 }]), text, words);
    expect(plan.request.inputs[0]).toMatchObject({ datatype: 'BYTES', shape: [2] });
    expect((plan.request.inputs[0]!.data as Uint8Array[]).map((b) => Buffer.from(b).toString())).toEqual(['hi', '']);
    expect(failure(() => decode(h([{ name: 'TEXT', batch_byte_size: 10 }]), text, words)).message).toBe(
      "input 'TEXT': the model config has variable dims [-1]; the request header must give 'dims'",
    );
    expect(failure(() => decode(h([{ name: 'TEXT', dims: [2] }]), text, words)).message).toBe(
      "input 'TEXT': batch_byte_size is required for STRING inputs",
    );
    expect(
      failure(() => decode({ ...h([{ name: 'TEXT', dims: [2], batch_byte_size: 10 }]), batch_size: 2 }, text, words))
        .message,
    ).toBe("inference request batch-size must be 1 for 'words', which does not support batching");
    expect(failure(() => decode(h([{ name: 'TEXT', dims: [3], batch_byte_size: 10 }]), text, words)).message).toMatch(
      /3 BYTES elements need at least 12 bytes/,
    );
  });
});
