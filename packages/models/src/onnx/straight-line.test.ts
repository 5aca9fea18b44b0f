import pkg from 'onnx-proto';
import { describe, expect, it } from 'vitest';
import { buildModel, OnnxElemType } from './builder.ts';
import { isStraightLineGraph } from './straight-line.ts';

const { onnx } = pkg;

const io = (name: string) => ({ name, elemType: OnnxElemType.FLOAT, shape: [4] });
/** `If` picks one of two subgraphs by a boolean input: control flow. */
function ifModel(): Uint8Array {
  const branch = (name: string) => ({
    name,
    nodes: [{ opType: 'Identity', inputs: ['X'], outputs: [`${name}_out`] }],
    outputs: [io(`${name}_out`)],
  });
  return buildModel({
    graphName: 'if',
    inputs: [io('X'), { name: 'COND', elemType: OnnxElemType.BOOL, shape: [] }],
    outputs: [io('Y')],
    nodes: [
      {
        opType: 'If',
        inputs: ['COND'],
        outputs: ['Y'],
        subgraphs: { then_branch: branch('then'), else_branch: branch('else') },
      },
    ],
  });
}

describe('isStraightLineGraph', () => {
  it('holds for a graph of default-domain operators', () => {
    const add = buildModel({
      graphName: 'add',
      inputs: [io('A'), io('B')],
      outputs: [io('C')],
      nodes: [{ opType: 'Add', inputs: ['A', 'B'], outputs: ['C'] }],
    });
    expect(isStraightLineGraph(add)).toBe(true);
  });

  it('fails for control flow: a node with subgraphs', () => {
    expect(isStraightLineGraph(ifModel())).toBe(false);
  });

  it('fails for an operator of another domain', () => {
    const model = onnx.ModelProto.decode(
      buildModel({
        graphName: 'custom',
        inputs: [io('A')],
        outputs: [io('B')],
        nodes: [{ opType: 'Identity', inputs: ['A'], outputs: ['B'] }],
      }),
    );
    model.graph!.node![0]!.domain = 'com.example';
    expect(isStraightLineGraph(onnx.ModelProto.encode(model).finish())).toBe(false);
  });

  it('fails for bytes that are not a model', () => {
    expect(isStraightLineGraph(new Uint8Array([0xff, 0xff, 0xff, 0x01]))).toBe(false);
  });
});
