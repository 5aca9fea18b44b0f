import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { floatToHalfBits } from '@nvcf/client';
import { describe, expect, it } from 'vitest';
import { textDelta } from './commands/invoke.ts';
import { UsageError } from './errors.ts';
import { kserveJson, parseDatatypes, parseShapes, readInput } from './tensors.ts';
import { bytesOf, npyFile } from './testing/npy-file.ts';

const none = { datatypes: new Map(), shapes: new Map() };

describe('readInput', () => {
  it('a JSON array: shape from its nesting, datatype from --datatype or else the model', async () => {
    const datatypes = parseDatatypes(['A=int32']);
    expect(await readInput('A=[[1,2,3],[4,5,6]]', { ...none, datatypes })).toEqual({
      name: 'A',
      datatype: 'INT32',
      shape: [2, 3],
      data: [1, 2, 3, 4, 5, 6],
    });
    const modelInputs = async () => new Map([['B', { datatype: 'FP32', shape: [-1, 2] }]]);
    expect(await readInput('B=[[0.5,1]]', { ...none, modelInputs })).toMatchObject({ datatype: 'FP32', shape: [1, 2] });
    expect(await readInput('B=[0.5,1]', { ...none, shapes: parseShapes(['B=1,2']), modelInputs })).toMatchObject({
      shape: [1, 2],
    });
    await expect(readInput('C=[1]', { ...none, modelInputs })).rejects.toThrow(/--datatype C=TYPE/);
    await expect(readInput('A=[[1,2],[3]]', { ...none, datatypes })).rejects.toThrow(/not rectangular/);
    await expect(readInput('A=nope', { ...none, datatypes })).rejects.toThrow(UsageError);
    await expect(readInput('=[1]', none)).rejects.toThrow(/NAME=VALUE/);
  });

  it('a .npy file: its dtype and shape; --shape may reshape it, a contradicting --datatype is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nvcf-cli-npy-'));
    try {
      const path = join(dir, 'x.npy');
      await writeFile(path, npyFile('<u2', [2, 2], bytesOf(new Uint16Array([1, 2, 3, 4]))));
      expect(await readInput(`X=@${path}`, none)).toEqual({
        name: 'X',
        datatype: 'UINT16',
        shape: [2, 2],
        data: new Uint16Array([1, 2, 3, 4]),
      });
      expect((await readInput(`X=@${path}`, { ...none, shapes: parseShapes(['X=4']) })).shape).toEqual([4]);
      await expect(readInput(`X=@${path}`, { ...none, datatypes: parseDatatypes(['X=FP32']) })).rejects.toThrow(
        /holds UINT16, --datatype says FP32/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses unknown datatypes and malformed shapes', () => {
    expect(() => parseDatatypes(['A=FLOAT'])).toThrow(/not one of/);
    expect(() => parseShapes(['A=1,x'])).toThrow(/non-negative integers/);
    expect(() => parseShapes(['A='])).toThrow(UsageError);
  });
});

describe('kserveJson', () => {
  it('prints each datatype as KServe V2 JSON: exact 64-bit integers, FP16 as numbers, non-finite floats named', () => {
    const text = kserveJson({
      modelName: 'm',
      modelVersion: '1',
      id: 'r1',
      outputs: new Map([
        ['I', { name: 'I', datatype: 'INT64', shape: [2], data: new BigInt64Array([2n ** 62n + 1n, -1n]) }],
        [
          'H',
          {
            name: 'H',
            datatype: 'FP16',
            shape: [2],
            data: new Uint16Array([floatToHalfBits(0.5), floatToHalfBits(-2)]),
          },
        ],
        [
          'F',
          {
            name: 'F',
            datatype: 'FP32',
            shape: [4],
            data: new Float32Array([Number.NaN, Number.POSITIVE_INFINITY, -0, 1.5]),
          },
        ],
        ['B', { name: 'B', datatype: 'BOOL', shape: [2], data: new Uint8Array([1, 0]) }],
        ['S', { name: 'S', datatype: 'BYTES', shape: [1], data: [new TextEncoder().encode('hé')] }],
        ['R', { name: 'R', datatype: 'BYTES', shape: [1], data: [new Uint8Array([0xff, 0])], parameters: { p: 1 } }],
      ]),
    });
    expect(text).toBe(
      '{"model_name":"m","model_version":"1","id":"r1","outputs":[' +
        '{"name":"I","datatype":"INT64","shape":[2],"data":[4611686018427387905,-1]},' +
        '{"name":"H","datatype":"FP16","shape":[2],"data":[0.5,-2]},' +
        '{"name":"F","datatype":"FP32","shape":[4],"data":["NaN","Infinity",-0,1.5]},' +
        '{"name":"B","datatype":"BOOL","shape":[2],"data":[true,false]},' +
        '{"name":"S","datatype":"BYTES","shape":[1],"data":["hé"]},' +
        '{"name":"R","datatype":"BYTES","shape":[1],"parameters":{"p":1,"content_encoding":"base64"},"data":["/wA="]}]}',
    );
  });
});

describe('textDelta', () => {
  it('the text of chat and completion chunks; undefined for anything else', () => {
    expect(textDelta('{"object":"chat.completion.chunk","choices":[{"delta":{"content":"Hi"}}]}')).toBe('Hi');
    expect(textDelta('{"choices":[{"delta":{},"finish_reason":"length"}]}')).toBe('');
    expect(textDelta('{"object":"text_completion","choices":[{"text":"!"}]}')).toBe('!');
    expect(textDelta('{"model_name":"simple","outputs":[]}')).toBeUndefined();
    expect(textDelta('not json')).toBeUndefined();
  });
});
