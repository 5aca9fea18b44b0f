import type { TensorSpec } from '@nvcf/protocol';
import type { ModelSignatureInfo } from './auto-complete.ts';
import { configDataType } from './config-datatypes.ts';
import type { ModelConfig, ModelInputConfig, ModelOutputConfig } from './model-config.ts';
import { ModelConfigError } from './proto-schema.ts';
import { sequenceBatchingOf } from './sequence-batching.ts';

const shape = (dims: readonly number[]) => `[${dims.join(',')}]`;

/**
 * Checks a completed config on its own terms (Triton core ValidateModelConfig / ValidateIOShape, the parts this
 * server relies on) and against the loaded model (onnxruntime_backend ValidateInputs/ValidateOutputs): every
 * configured input and output exists in the model with the same data type and compatible dims (for inputs a
 * model dim of -1 accepts any configured dim, outputs must match exactly; with max_batch_size > 0 the model's
 * first dim must be -1 and is not listed; `reshape`, when given, is what is compared); every model input is
 * configured; optional inputs only without batching; ragged inputs need a model shape of [-1].
 *
 * @throws ModelConfigError `failed to load '<model>': <reason>` naming the tensor.
 * @example
 * validateConfigAgainstModel(autoCompleteConfig(parsed, model), model);
 */
export function validateConfigAgainstModel(config: ModelConfig, model: ModelSignatureInfo): void {
  const fail = (reason: string): never => {
    throw new ModelConfigError(`failed to load '${model.name}': ${reason}`);
  };
  validateOwnRules(config, fail);
  checkSide('input', config.input, model.inputs, config.max_batch_size, fail);
  checkSide('output', config.output, model.outputs, config.max_batch_size, fail);
  // The sequence batcher feeds its control and state inputs itself: the config lists them under sequence_batching.
  const sequencing = sequenceBatchingOf(config);
  const controls = new Set([
    ...(sequencing?.controls.map((c) => c.name) ?? []),
    ...(sequencing?.states.map((s) => s.inputName) ?? []),
  ]);
  for (const t of model.inputs) {
    if (!config.input.some((i) => i.name === t.name) && !controls.has(t.name)) {
      fail(`the model has input '${t.name}', which the configuration does not list`);
    }
  }
}

function validateOwnRules(c: ModelConfig, fail: (reason: string) => never): void {
  if (c.max_batch_size < 0) fail(`'max_batch_size' must be non-negative, got ${c.max_batch_size}`);
  const db = c.dynamic_batching;
  if (db) {
    for (const size of db.preferred_batch_size) {
      if (size <= 0) fail(`dynamic batching preferred size must be positive, got ${size}`);
      if (size > c.max_batch_size)
        fail(`dynamic batching preferred size ${size} exceeds max_batch_size ${c.max_batch_size}`);
    }
    if (db.priority_levels !== 0 && (db.default_priority_level < 1 || db.default_priority_level > db.priority_levels)) {
      fail(`dynamic batching default_priority_level must be in [1, ${db.priority_levels}]`);
    }
  }
  for (const [side, list] of [
    ['input', c.input],
    ['output', c.output],
  ] as const) {
    const seen = new Set<string>();
    for (const io of list) {
      if (!io.name) fail(`every model ${side} needs a name`);
      if (seen.has(io.name)) fail(`${side} '${io.name}' is listed more than once`);
      seen.add(io.name);
      if (io.data_type === 'TYPE_INVALID') fail(`${side} '${io.name}' needs a data_type`);
      checkShape(`${side} '${io.name}'`, io, fail);
    }
  }
}

const validDim = (d: number) => d >= 1 || d === -1;
const elementCount = (dims: readonly number[]) => (dims.includes(-1) ? -1 : dims.reduce((a, b) => a * b, 1));

function checkShape(label: string, io: ModelInputConfig | ModelOutputConfig, fail: (reason: string) => never): void {
  if (!io.dims.length) fail(`${label} must specify 'dims'`);
  if (!io.dims.every(validDim))
    fail(`${label}: dimensions must be >= 1, or -1 for a variable size; got ${shape(io.dims)}`);
  if (!io.reshape) return;
  const target = io.reshape.shape;
  if (!target.every(validDim)) fail(`${label}: reshape dimensions must be >= 1, or -1; got ${shape(target)}`);
  const from = elementCount(io.dims);
  const to = elementCount(target);
  if ((from === -1) !== (to === -1) || (from !== -1 && from !== to)) {
    fail(`${label}: dims ${shape(io.dims)} and reshape ${shape(target)} have different sizes`);
  }
}

function checkSide(
  side: 'input' | 'output',
  configured: ReadonlyArray<ModelInputConfig | ModelOutputConfig>,
  model: readonly TensorSpec[],
  maxBatchSize: number,
  fail: (reason: string) => never,
): void {
  for (const io of configured) {
    const allowed = () => model.map((m) => m.name).join(', ') || '(none)';
    const t =
      model.find((m) => m.name === io.name) ??
      fail(`unexpected inference ${side} '${io.name}', allowed ${side}s are: ${allowed()}`);
    const provided = configDataType(t.datatype);
    if (io.data_type !== provided) {
      fail(`configuration expects datatype ${io.data_type} for ${side} '${io.name}', model provides ${provided}`);
    }
    const dims = io.reshape?.shape ?? io.dims;
    if ('optional' in io && io.optional && maxBatchSize !== 0) {
      fail(`optional input '${io.name}' is not supported for models that support batching`);
    }
    if ('allow_ragged_batch' in io && io.allow_ragged_batch) {
      if (io.optional) fail(`ragged input '${io.name}' cannot be optional`);
      if (t.shape.length !== 1 || t.shape[0] !== -1) {
        fail(`ragged input '${io.name}' needs a model shape of [-1], the model has ${shape(t.shape)}`);
      }
    } else if (t.shape.length === 0) {
      // A scalar in the model can only be configured as ones (dims [1]).
      if (!dims.every((d) => d === 1))
        fail(`scalar tensor '${io.name}' must be configured with dims of 1, got ${shape(dims)}`);
    } else {
      // As the ORT backend: inputs accept any configured size for a model dim of -1, outputs must match exactly.
      compareDims(io.name, t.shape, dims, maxBatchSize, side === 'output', fail);
    }
  }
}

/** onnxruntime_backend's CompareDimsSupported. */
function compareDims(
  name: string,
  modelShape: readonly number[],
  dims: readonly number[],
  maxBatchSize: number,
  exact: boolean,
  fail: (reason: string) => never,
): void {
  const prefix = `tensor '${name}'`;
  let full = [...dims];
  if (maxBatchSize > 0) {
    if (!modelShape.length || modelShape[0] !== -1) {
      fail(
        `${prefix}: for the model to support batching the shape should have at least 1 dimension and the first ` +
          `dimension must be -1; but shape expected by the model is ${shape(modelShape)}`,
      );
    }
    full = [-1, ...dims];
  }
  const fits = modelShape.length === full.length && modelShape.every((d, i) => (d === -1 && !exact) || d === full[i]);
  if (fits) return;
  const batchNote = maxBatchSize > 0 ? ' (an initial batch dimension because max_batch_size > 0, then dims)' : '';
  fail(
    `${prefix}: the model expects ${modelShape.length} dimensions (shape ${shape(modelShape)}) but the model ` +
      `configuration specifies ${full.length} dimensions${batchNote}: shape ${shape(full)}`,
  );
}
