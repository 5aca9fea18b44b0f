import { AppError, type Tensor } from '@nvcf/protocol';
import type { ClassesMsg, ClassMsg } from './v1-messages.ts';

const text = new TextDecoder();

/**
 * Converts the core's classification output (a BYTES tensor of `"<value>:<index>[:<label>]"` strings, shape
 * `[batch, k]` or `[k]`, Triton classification extension) into v1's `batch_classes`: one Classes per batch item,
 * each class as `{ idx, value, label }` in the core's order (largest value first). Values are the six-decimal
 * figures the core prints, as float32 (`"0.500000"` → 0.5); a label may itself contain ':'.
 *
 * @throws AppError INTERNAL when the tensor is not what `classify` produces (a bug, not a client error).
 * @example
 * batchClasses({ name: 'P', datatype: 'BYTES', shape: [1, 1], data: [utf8('0.750000:3:cat')] }, true);
 * // [{ cls: [{ idx: 3, value: 0.75, label: 'cat' }] }]
 */
export function batchClasses(tensor: Tensor, batching: boolean): ClassesMsg[] {
  const data = tensor.data;
  if (tensor.datatype !== 'BYTES' || !Array.isArray(data)) {
    throw new AppError('INTERNAL', `output '${tensor.name}': classification did not produce BYTES`);
  }
  const rows = batching ? (tensor.shape[0] ?? 0) : 1;
  const perRow = rows === 0 ? 0 : data.length / rows;
  const out: ClassesMsg[] = [];
  for (let r = 0; r < rows; r++) {
    const cls = data.slice(r * perRow, (r + 1) * perRow).map((e) => parseClass(text.decode(e), tensor.name));
    out.push({ cls });
  }
  return out;
}

function parseClass(entry: string, output: string): ClassMsg {
  const first = entry.indexOf(':');
  const second = first < 0 ? -1 : entry.indexOf(':', first + 1);
  const idx = Number(entry.slice(first + 1, second < 0 ? undefined : second));
  if (first < 0 || !Number.isSafeInteger(idx)) {
    throw new AppError('INTERNAL', `output '${output}': unexpected classification entry '${entry}'`);
  }
  const label = second < 0 ? '' : entry.slice(second + 1);
  return { idx, value: toFloat32(parseValue(entry.slice(0, first))), ...(label ? { label } : {}) };
}

/** The core prints C's `%f` forms: digits, `nan`, `inf`, `-inf`. */
function parseValue(s: string): number {
  if (s === 'nan' || s === '-nan') return Number.NaN;
  if (s === 'inf') return Number.POSITIVE_INFINITY;
  if (s === '-inf') return Number.NEGATIVE_INFINITY;
  return Number(s);
}

/**
 * The shortest decimal that reads back as the same float32 (`Math.fround(0.1)` is 0.10000000149…, printed as 0.1),
 * so text and JSON show what a float field holds without float64 noise.
 */
export function toFloat32(x: number): number {
  const f = Math.fround(x);
  if (!Number.isFinite(f) || f === 0) return f;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(f.toPrecision(digits));
    if (Math.fround(candidate) === f) return candidate;
  }
  return f;
}
