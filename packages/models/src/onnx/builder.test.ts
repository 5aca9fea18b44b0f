import pkg from 'onnx-proto';
import { describe, expect, it } from 'vitest';
import { buildModel, float32RawData, OnnxElemType, PRODUCER_NAME } from './builder.ts';

const { onnx } = pkg;

describe('buildModel', () => {
  const bytes = buildModel({
    graphName: 'g',
    inputs: [{ name: 'A', elemType: OnnxElemType.FLOAT, shape: ['batch', 4] }],
    outputs: [{ name: 'B', elemType: OnnxElemType.FLOAT, shape: ['batch', 4] }],
    nodes: [{ opType: 'Relu', inputs: ['A'], outputs: ['B'] }],
    initializers: [
      { name: 'w', elemType: OnnxElemType.FLOAT, dims: [2], rawData: float32RawData(new Float32Array([1, -2])) },
    ],
  });
  const model = onnx.ModelProto.decode(bytes);

  it('targets opset 17 and IR version 8 by default', () => {
    expect(Number(model.irVersion)).toBe(8);
    expect(model.opsetImport.map((o) => [o.domain, Number(o.version)])).toEqual([['', 17]]);
    expect(model.producerName).toBe(PRODUCER_NAME);
  });

  it('writes symbolic dimensions as dim_param and fixed ones as dim_value', () => {
    const dims = model.graph?.input?.[0]?.type?.tensorType?.shape?.dim ?? [];
    expect(dims.map((d) => d.dimParam || Number(d.dimValue))).toEqual(['batch', 4]);
  });

  it('names nodes and stores initializers as little-endian raw data', () => {
    expect(model.graph?.node?.[0]?.name).toBe('relu_0');
    expect([...(model.graph?.initializer?.[0]?.rawData ?? [])]).toEqual([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
  });

  it('is deterministic', () => {
    expect(buildModel({ graphName: 'g', inputs: [], outputs: [], nodes: [] })).toEqual(
      buildModel({ graphName: 'g', inputs: [], outputs: [], nodes: [] }),
    );
  });
});
