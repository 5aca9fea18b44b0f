import pkg from 'onnx-proto';

const { onnx } = pkg;

/** Attributes that hold subgraphs (If, Loop, Scan, and custom ops). */
const SUBGRAPH_TYPES = new Set<number>([
  onnx.AttributeProto.AttributeType.GRAPH,
  onnx.AttributeProto.AttributeType.GRAPHS,
]);
const DEFAULT_DOMAINS = new Set(['', 'ai.onnx']);

/**
 * Whether a model's graph runs the same operators whatever its inputs hold: every node an operator of the default
 * ONNX domain without a subgraph, and no model-local functions. A model with control flow (If, Loop, Scan) or
 * custom operators may take far longer on some inputs than on others of the same size. Bytes that are not an
 * ONNX model are not straight-line.
 *
 * @example
 * isStraightLineGraph(await readFile('model.onnx')); // true for a graph of Add, MatMul, Relu…
 */
export function isStraightLineGraph(bytes: Uint8Array): boolean {
  let model: InstanceType<typeof onnx.ModelProto>;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch {
    return false;
  }
  const nodes = model.graph?.node ?? [];
  if (nodes.length === 0 || (model.functions?.length ?? 0) > 0) return false;
  return nodes.every(
    (node) =>
      DEFAULT_DOMAINS.has(node.domain ?? '') &&
      (node.attribute ?? []).every((a) => !SUBGRAPH_TYPES.has(Number(a.type)) && !a.g && (a.graphs?.length ?? 0) === 0),
  );
}
