import { TextFormatError } from '@nvcf/models';
import { describe, expect, it } from 'vitest';
import { compactV1, decodeV1, encodeV1, parseV1Text, printV1Text, v1Json, v1Schema } from './v1-codec.ts';
import type { InferResponseHeaderMsg } from './v1-messages.ts';
import { V1_PACKAGE } from './v1-protos.ts';

const response: InferResponseHeaderMsg = {
  model_name: 'simple',
  model_version: 1,
  batch_size: 2,
  output: [
    { name: 'OUTPUT0', raw: { dims: [16], batch_byte_size: 128 }, data_type: 'TYPE_INT32' },
    {
      name: 'OUTPUT1',
      batch_classes: [
        { cls: [{ idx: 3, value: 0.75, label: 'a "quoted" label\n' }] },
        { cls: [{ idx: 0, value: 0.5 }] },
      ],
    },
  ],
  id: 42,
};

describe('v1 schema (derived from proto/trtis)', () => {
  it("has v1.15.0's field tables in declaration order, maps and enums typed", () => {
    const s = v1Schema();
    expect(Object.keys(s[`${V1_PACKAGE}.RequestStatus`]!.fields)).toEqual(['code', 'msg', 'server_id', 'request_id']);
    expect(s[`${V1_PACKAGE}.ModelVersionStatus`]!.fields.infer_stats).toMatchObject({ label: 'map', mapKey: 'uint32' });
    expect(s[`${V1_PACKAGE}.ModelStatus`]!.fields.version_status).toMatchObject({ label: 'map', mapKey: 'int64' });
    expect(s[`${V1_PACKAGE}.ModelStatus`]!.fields.config!.type).toEqual({
      kind: 'message',
      message: 'inference.ModelConfig',
    });
    const code = s[`${V1_PACKAGE}.RequestStatus`]!.fields.code!.type;
    expect(code.kind === 'enum' && code.values).toMatchObject({ SUCCESS: 1, ALREADY_EXISTS: 8 });
    const ready = s[`${V1_PACKAGE}.ServerStatus`]!.fields.ready_state!.type;
    expect(ready.kind === 'enum' && ready.values.SERVER_FAILED_TO_INITIALIZE).toBe(10);
  });
});

describe('text format', () => {
  it('prints NV-Status on one line as ShortDebugString does', () => {
    expect(
      printV1Text('RequestStatus', { code: 'SUCCESS', server_id: 'inference:0', request_id: 7 }, { singleLine: true }),
    ).toBe('code: SUCCESS server_id: "inference:0" request_id: 7');
  });

  it('prints repeated fields by repetition and leaves defaults out', () => {
    const line = printV1Text('InferResponseHeader', response, { singleLine: true });
    expect(line).toContain('output { name: "OUTPUT0" raw { dims: 16 batch_byte_size: 128 } data_type: TYPE_INT32 }');
    expect(line).toContain('batch_classes { cls { value: 0.5 } }');
    expect(line).not.toContain('[');
  });

  it('keeps header lines ASCII and escaped', () => {
    const line = printV1Text('RequestStatus', { code: 'INVALID_ARG', msg: 'bad\n"é"' }, { singleLine: true });
    expect(line).toBe('code: INVALID_ARG msg: "bad\\n\\"\\303\\251\\""');
    expect(parseV1Text('RequestStatus', line, 'NV-Status')).toEqual({ code: 'INVALID_ARG', msg: 'bad\n"é"' });
  });

  it('round-trips a response header through the multi-line and the one-line forms', () => {
    const compact = compactV1('InferResponseHeader', response);
    expect(parseV1Text('InferResponseHeader', printV1Text('InferResponseHeader', response), 'body')).toEqual(compact);
    expect(
      parseV1Text('InferResponseHeader', printV1Text('InferResponseHeader', response, { singleLine: true }), 'h'),
    ).toEqual(compact);
  });

  it('parses an NV-InferRequest example and the pre-1.0 byte_size spelling', () => {
    expect(
      parseV1Text(
        'InferRequestHeader',
        'batch_size: 1 input { name: "INPUT0" } input { name: "INPUT1" } output { name: "OUTPUT0" } output { name: "OUTPUT1" }',
        'NV-InferRequest',
      ),
    ).toEqual({
      batch_size: 1,
      input: [{ name: 'INPUT0' }, { name: 'INPUT1' }],
      output: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
    });
    expect(
      parseV1Text(
        'InferRequestHeader',
        'batch_size: 1 input { name: "input" byte_size: 602112 } output { name: "output" byte_size: 4000 cls { count: 3 } }',
        'NV-InferRequest',
      ),
    ).toEqual({
      batch_size: 1,
      input: [{ name: 'input', byte_size: 602112 }],
      output: [{ name: 'output', byte_size: 4000, cls: { count: 3 } }],
    });
  });

  it('reports bad text with the header name and position', () => {
    const parse = (text: string) => () => parseV1Text('InferRequestHeader', text, 'NV-InferRequest');
    expect(parse('batch_size: 1 input {')).toThrow(TextFormatError);
    expect(parse('batch_size 1')).toThrow(/^NV-InferRequest:1:12: expected ':' or '\{'/);
    expect(parse('batchsize: 1')).toThrow("NV-InferRequest:1:1: unknown field 'batchsize' in InferRequestHeader");
    expect(parse('batch_size: -1')).toThrow(/out of range for uint32/);
    expect(parse('flags: FLAG_SEQUENCE_START')).toThrow(/expects uint32/);
  });
});

describe('binary and JSON', () => {
  it('round-trips through the wire format, with 64-bit map keys read back as decimals', () => {
    const status = {
      id: 'inference:0',
      uptime_ns: 2 ** 40,
      ready_state: 'SERVER_READY',
      model_status: {
        simple: {
          config: {
            name: 'simple',
            max_batch_size: 8,
            input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] }],
          },
          version_status: {
            '1': { ready_state: 'MODEL_READY', infer_stats: { '4': { success: { count: 2, total_time_ns: 5 } } } },
            '12': { ready_state: 'MODEL_UNAVAILABLE', ready_state_reason: { message: 'unloaded' } },
          },
        },
      },
    };
    const bytes = encodeV1('ServerStatus', status);
    expect(decodeV1('ServerStatus', bytes)).toEqual(compactV1('ServerStatus', status));
    expect(decodeV1('InferResponseHeader', encodeV1('InferResponseHeader', response))).toEqual(
      compactV1('InferResponseHeader', response),
    );
  });

  it('leaves proto3 defaults off the wire', () => {
    expect(encodeV1('RequestStatus', { code: 'INVALID', msg: '', request_id: 0 }).byteLength).toBe(0);
    expect([...encodeV1('RequestStatus', { code: 'SUCCESS', request_id: 2 })]).toEqual([8, 1, 32, 2]);
  });

  it('prints proto3 JSON: snake_case names, enums by name, 64-bit integers as strings', () => {
    expect(v1Json('InferResponseHeader', response)).toMatchObject({
      model_name: 'simple',
      model_version: '1',
      batch_size: 2,
      id: '42',
      output: [{ name: 'OUTPUT0', raw: { dims: ['16'], batch_byte_size: '128' }, data_type: 'TYPE_INT32' }, {}],
    });
  });
});
