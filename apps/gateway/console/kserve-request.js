/**
 * A KServe V2 inference request prefilled from a model's signature: dynamic dimensions (`-1`) become 1 and every
 * input gets placeholder data of its datatype, so "send" works at once and shows the shape to edit.
 * @param {{ name: string, datatype: string, shape: number[] }[]} inputs
 */
export function kserveRequest(inputs) {
  return {
    inputs: inputs.map((t) => {
      const shape = t.shape.map((d) => (d < 0 ? 1 : d));
      const count = shape.reduce((a, b) => a * b, 1);
      return { name: t.name, datatype: t.datatype, shape, data: placeholder(t.datatype, count) };
    }),
  };
}

/** @param {string} datatype @param {number} count */
function placeholder(datatype, count) {
  if (datatype === 'BYTES') return Array.from({ length: count }, (_, i) => (i === 0 ? 'hello' : `s${i}`));
  if (datatype === 'BOOL') return Array.from({ length: count }, (_, i) => i % 2 === 0);
  if (datatype.startsWith('FP')) return Array.from({ length: count }, (_, i) => i / 2);
  if (datatype.startsWith('UINT')) return Array.from({ length: count }, (_, i) => i % 100);
  return Array.from({ length: count }, (_, i) => (i % 100) + 1);
}
