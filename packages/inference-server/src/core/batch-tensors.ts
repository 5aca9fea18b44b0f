import { AppError, FIXED_ARRAY_CLASS, type Tensor, type TensorSpec } from '@nvcf/protocol';

/**
 * Joining requests' tensors along the batch dimension (dim 0) and cutting a batch's outputs back into
 * each request's rows: the tensor half of Triton's dynamic batcher.
 */

const elements = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** A tensor the model would accept as it is: declared name, datatype and shape, storage that fits the shape. */
function fitsSpec(t: Tensor, spec: TensorSpec | undefined, rows: number): boolean {
  if (!spec || spec.datatype !== t.datatype || spec.shape[0] !== -1) return false;
  if (t.shape.length !== spec.shape.length || t.shape[0] !== rows) return false;
  if (!t.shape.every((d, i) => Number.isSafeInteger(d) && d >= 0 && (spec.shape[i] === -1 || spec.shape[i] === d))) {
    return false;
  }
  const storageFits = t.datatype === 'BYTES' ? Array.isArray(t.data) : t.data instanceof FIXED_ARRAY_CLASS[t.datatype];
  return storageFits && t.data.length === elements(t.shape);
}

/**
 * What a request must share with others to run in one batch with them: input names, datatypes, non-batch
 * dimensions and requested outputs. `undefined` when the request must run alone: anything the model would
 * refuse stays out of a merged batch, so that the model's error names the client's own shapes and no other
 * request fails with it.
 *
 * @param specs the model's inputs, batch dimension included (-1 where dynamic).
 * @example
 * batchKey([{ name: 'X', datatype: 'FP32', shape: [2, 3], data: new Float32Array(6) }], 2, undefined, specs);
 * // '[[["X","FP32",[3]]],null]'
 */
export function batchKey(
  inputs: readonly Tensor[],
  rows: number,
  outputNames: readonly string[] | undefined,
  specs: readonly TensorSpec[],
): string | undefined {
  if (!Number.isSafeInteger(rows) || rows < 1 || inputs.length !== specs.length) return undefined;
  const byName = new Map(specs.map((s) => [s.name, s]));
  const names = new Set<string>();
  for (const t of inputs) {
    if (names.has(t.name) || !fitsSpec(t, byName.get(t.name), rows)) return undefined;
    names.add(t.name);
  }
  const sorted = [...inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // An empty list asks for every output, as no list does (the runner treats them alike).
  const outputs = outputNames && outputNames.length > 0 ? outputNames : null;
  return JSON.stringify([sorted.map((t) => [t.name, t.datatype, t.shape.slice(1)]), outputs]);
}

/**
 * Joins same-named tensors along dim 0. Fixed-size data lands in a fresh buffer that starts at byte 0 and
 * spans its whole ArrayBuffer, so it can be transferred to another thread; BYTES elements are shared.
 */
export function concatRows(parts: readonly Tensor[]): Tensor {
  const first = parts[0];
  if (!first) throw new AppError('INTERNAL', 'cannot join an empty batch');
  const inner = first.shape.slice(1);
  const rows = parts.reduce((sum, p) => sum + (p.shape[0] ?? 0), 0);
  for (const p of parts) {
    const same = p.name === first.name && p.datatype === first.datatype && p.shape.length === first.shape.length;
    if (!same || !p.shape.slice(1).every((d, i) => d === inner[i]) || p.data.length !== elements(p.shape)) {
      throw new AppError('INTERNAL', `cannot join tensor '${p.name}' with '${first.name}' along the batch dimension`);
    }
  }
  const shape = [rows, ...inner];
  const { datatype } = first;
  if (datatype === 'BYTES') {
    return { name: first.name, datatype, shape, data: parts.flatMap((p) => (Array.isArray(p.data) ? p.data : [])) };
  }
  const bytes = new Uint8Array(parts.reduce((sum, p) => sum + byteView(p).byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    const view = byteView(p);
    bytes.set(view, offset);
    offset += view.byteLength;
  }
  return { name: first.name, datatype, shape, data: new FIXED_ARRAY_CLASS[datatype](bytes.buffer, 0, elements(shape)) };
}

function byteView(t: Tensor): Uint8Array {
  if (t.datatype === 'BYTES' || Array.isArray(t.data) || !(t.data instanceof FIXED_ARRAY_CLASS[t.datatype])) {
    throw new AppError('INTERNAL', `tensor '${t.name}' storage does not match ${t.datatype}`);
  }
  return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

/**
 * One batch's inputs from several requests that share a `batchKey`, in the first request's input order
 * (the others are matched by name).
 */
export function concatRequests(requests: readonly (readonly Tensor[])[]): Tensor[] {
  const first = requests[0] ?? [];
  return first.map((t) =>
    concatRows(
      requests.map((inputs) => {
        const same = inputs.find((x) => x.name === t.name);
        if (!same) throw new AppError('INTERNAL', `a batched request lacks input '${t.name}'`);
        return same;
      }),
    ),
  );
}

/**
 * Cuts a batch output into consecutive row ranges, one per request: views onto the output's data, no copy.
 * Throws INTERNAL when the output's first dimension is not the batch's rows (the model is not batch-major
 * there, so no row belongs to any one request).
 */
export function splitRows(t: Tensor, rows: readonly number[]): Tensor[] {
  const total = rows.reduce((a, b) => a + b, 0);
  if (t.shape.length === 0 || t.shape[0] !== total || t.data.length !== elements(t.shape)) {
    throw new AppError(
      'INTERNAL',
      `model output '${t.name}' has shape [${t.shape.join(',')}], not batch-major over the batch's ${total} rows`,
    );
  }
  const inner = t.shape.slice(1);
  const perRow = elements(inner);
  let start = 0;
  return rows.map((n) => {
    const from = start * perRow;
    const to = (start + n) * perRow;
    start += n;
    const data = Array.isArray(t.data) ? t.data.slice(from, to) : t.data.subarray(from, to);
    return { name: t.name, datatype: t.datatype, shape: [n, ...inner], data };
  });
}

/** A batch's outputs as each request's outputs, in the same output order. */
export function splitOutputs(outputs: readonly Tensor[], rows: readonly number[]): Tensor[][] {
  const parts = outputs.map((t) => splitRows(t, rows));
  return rows.map((_, i) => parts.map((p) => p[i] as Tensor));
}
