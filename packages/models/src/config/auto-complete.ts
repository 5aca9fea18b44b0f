import type { TensorSpec } from '@nvcf/protocol';
import { configDataType } from './config-datatypes.ts';
import { normalizeInstanceGroups } from './instance-groups.ts';
import type { DynamicBatchingConfig, ModelConfig, ModelInputConfig, ModelOutputConfig } from './model-config.ts';
import { ModelConfigError } from './proto-schema.ts';

/** What auto-complete needs from a loaded model: its directory name and ONNX signature (-1 = dynamic dim). */
export interface ModelSignatureInfo {
  name: string;
  inputs: TensorSpec[];
  outputs: TensorSpec[];
}

export interface AutoCompleteOptions {
  /** Triton's `--backend-config=default-max-batch-size`; documented default 4. */
  defaultMaxBatchSize?: number;
  /** GPU ids available to this server, for KIND_AUTO / KIND_GPU instance groups. Default none. */
  gpus?: number[];
  /** Instances of a KIND_CPU group that names no count (Triton: 2). */
  cpuInstances?: number;
}

const PLATFORM = 'onnxruntime_onnx';
const BACKEND = 'onnxruntime';
const MODEL_FILENAME = 'model.onnx';
/**
 * The built-in backends: inputs and outputs from the config alone. `identity` as Triton's identity backend
 * (OUTPUT<i> = INPUT<i>, bytes untouched); `repeat` as Triton's repeat backend (decoupled: one response per element
 * of IN); `dyna_sequence` as Triton's test backend of that name (a running sum per correlation id). These three have
 * no model file. `greedy_decoder` generates text (`text_input` → `text_output`, the text interface of Triton's LLM
 * backends) with the version's model.onnx as its byte-level next-token model.
 */
export const BUILT_IN_BACKENDS = ['identity', 'repeat', 'dyna_sequence', 'greedy_decoder'] as const;
export type BuiltInBackend = (typeof BUILT_IN_BACKENDS)[number];
export const isBuiltInBackend = (backend: string | undefined): backend is BuiltInBackend =>
  (BUILT_IN_BACKENDS as readonly string[]).includes(backend ?? '');

/** A fresh, fully defaulted config (protobuf defaults), copying what the caller gave so it is never mutated. */
function withDefaults(config: Partial<ModelConfig> | undefined): ModelConfig {
  const c = structuredClone(config ?? {});
  return {
    name: c.name ?? '',
    platform: c.platform ?? '',
    backend: c.backend ?? '',
    version_policy: c.version_policy ?? { latest: { num_versions: 1 } },
    max_batch_size: c.max_batch_size ?? 0,
    input: c.input ?? [],
    output: c.output ?? [],
    instance_group: c.instance_group ?? [],
    default_model_filename: c.default_model_filename ?? '',
    ...(c.dynamic_batching ? { dynamic_batching: c.dynamic_batching } : {}),
    parameters: c.parameters ?? {},
    extra: c.extra ?? {},
  };
}

const emptyDynamicBatching = (): DynamicBatchingConfig => ({
  preferred_batch_size: [],
  max_queue_delay_microseconds: 0,
  preserve_ordering: false,
  priority_levels: 0,
  default_priority_level: 0,
});

/**
 * Completes a model's config the way Triton does for an ONNX Runtime model (Triton model configuration;
 * Triton core AutoCompleteBackendFields + NormalizeModelConfig + NormalizeInstanceGroup, onnxruntime_backend
 * AutoCompleteConfig):
 *
 * - `name` defaults to the directory name and must equal it; platform/backend/default_model_filename default to
 *   `onnxruntime_onnx` / `onnxruntime` / `model.onnx`, and any other platform or backend is refused.
 * - Only when inputs or outputs are missing (as the ORT backend): batching is possible iff every model input and
 *   output has rank ≥ 1 and first dim -1; then max_batch_size 0 becomes `defaultMaxBatchSize`, and if it is > 1
 *   and no scheduler is set an empty `dynamic_batching {}` is added; a non-batchable model with max_batch_size ≠ 0
 *   fails. Missing inputs/outputs are filled from the signature, the batch dim stripped when max_batch_size > 0.
 * - Normalisation: dynamic_batching without preferred sizes gets `[max_batch_size]`, sequence_batching an idle
 *   timeout of 1 s, `optimization` pinned-memory defaults, and instance groups their defaults (KIND_CPU × `cpuInstances`, Triton's 2).
 *
 * Proto3 cannot tell `max_batch_size: 0` from no max_batch_size, and neither can Triton: both are "unset" here.
 * Run {@link validateConfigAgainstModel} on the result before serving.
 *
 * @throws ModelConfigError `failed to load '<model>': ...`
 * @example
 * const config = autoCompleteConfig(undefined, { name: 'simple', inputs, outputs }); // inputs [-1,16] INT32
 * config.max_batch_size; // 4
 * config.input[0].dims; // [16]
 * config.dynamic_batching; // { preferred_batch_size: [4], max_queue_delay_microseconds: 0, ... }
 */
export function autoCompleteConfig(
  config: Partial<ModelConfig> | undefined,
  model: ModelSignatureInfo,
  opts: AutoCompleteOptions = {},
): ModelConfig {
  const fail = (reason: string): never => {
    throw new ModelConfigError(`failed to load '${model.name}': ${reason}`);
  };
  const c = withDefaults(config);

  if (c.name && c.name !== model.name)
    fail(`the config names the model '${c.name}', but its directory is '${model.name}'`);
  c.name = model.name;
  if (isBuiltInBackend(c.backend) && !c.platform) {
    if (c.input.length === 0 || c.output.length === 0) {
      fail(`the ${c.backend} backend needs inputs and outputs in the config`);
    }
  } else {
    if (c.platform && c.platform !== PLATFORM) fail(`platform '${c.platform}' is not supported (only '${PLATFORM}')`);
    if (c.backend && c.backend !== BACKEND) {
      fail(
        `backend '${c.backend}' is not supported (only '${BACKEND}', ${BUILT_IN_BACKENDS.map((b) => `'${b}'`).join(', ')})`,
      );
    }
    c.platform = PLATFORM;
    c.backend = BACKEND;
    c.default_model_filename ||= MODEL_FILENAME;
  }

  const batchInputs = (c.extra.batch_input as unknown[] | undefined)?.length ?? 0;
  if (c.input.length + batchInputs === 0 || c.output.length === 0) completeFromModel(c, model, opts, fail);

  normalize(c);
  c.instance_group = normalizeInstanceGroups(c.instance_group, c.name, opts.gpus, opts.cpuInstances);
  return c;
}

/** onnxruntime_backend's AutoCompleteMaxBatch + AutoCompleteIO. */
function completeFromModel(
  c: ModelConfig,
  model: ModelSignatureInfo,
  opts: AutoCompleteOptions,
  fail: (reason: string) => never,
): void {
  const canBatch = [...model.inputs, ...model.outputs].every((t) => t.shape.length >= 1 && t.shape[0] === -1);
  if (canBatch) {
    if (c.max_batch_size === 0) c.max_batch_size = Math.max(opts.defaultMaxBatchSize ?? 4, 0);
    const scheduled = c.dynamic_batching || c.extra.sequence_batching || c.extra.ensemble_scheduling;
    // Our server runs one request at a time today; the config still says what Triton's would.
    if (c.max_batch_size > 1 && !scheduled) c.dynamic_batching = emptyDynamicBatching();
  } else if (c.max_batch_size !== 0) {
    fail('model does not support batching while non-zero max_batch_size is specified');
  }
  if (c.input.length === 0) c.input = model.inputs.map((t) => inputFrom(t, c.max_batch_size));
  if (c.output.length === 0) c.output = model.outputs.map((t) => outputFrom(t, c.max_batch_size));
}

/** Config dims for a model tensor: the batch dim dropped when batching; a scalar becomes [1] (+ empty reshape). */
function dimsFrom(t: TensorSpec, maxBatchSize: number): { dims: number[]; reshape?: { shape: number[] } } {
  const dims = maxBatchSize > 0 ? t.shape.slice(1) : [...t.shape];
  if (dims.length) return { dims };
  // An empty reshape with max_batch_size 0 would describe a scalar, which is not a valid config: ORT leaves it out.
  return maxBatchSize > 0 ? { dims: [1], reshape: { shape: [] } } : { dims: [1] };
}

function inputFrom(t: TensorSpec, maxBatchSize: number): ModelInputConfig {
  return {
    name: t.name,
    data_type: configDataType(t.datatype),
    format: 'FORMAT_NONE',
    ...dimsFrom(t, maxBatchSize),
    is_shape_tensor: false,
    allow_ragged_batch: false,
    optional: false,
  };
}

function outputFrom(t: TensorSpec, maxBatchSize: number): ModelOutputConfig {
  return {
    name: t.name,
    data_type: configDataType(t.datatype),
    ...dimsFrom(t, maxBatchSize),
    label_filename: '',
    is_shape_tensor: false,
  };
}

const SEQUENCE_IDLE_DEFAULT_MICROSECONDS = 1_000_000;

/** Triton core's NormalizeModelConfig (version_policy already defaults when the config is read). */
function normalize(c: ModelConfig): void {
  if (c.dynamic_batching && !c.dynamic_batching.preferred_batch_size.length && c.max_batch_size > 0) {
    c.dynamic_batching.preferred_batch_size = [c.max_batch_size];
  }
  const seq = c.extra.sequence_batching as Record<string, unknown> | undefined;
  if (seq) {
    if (!seq.max_sequence_idle_microseconds) seq.max_sequence_idle_microseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS;
    const oldest = seq.oldest as Record<string, unknown> | undefined;
    if (oldest && !(oldest.preferred_batch_size as unknown[] | undefined)?.length && c.max_batch_size > 0) {
      oldest.preferred_batch_size = [c.max_batch_size];
    }
  }
  const optimization = { ...(c.extra.optimization as Record<string, unknown> | undefined) };
  optimization.input_pinned_memory ??= { enable: true };
  optimization.output_pinned_memory ??= { enable: true };
  c.extra.optimization = optimization;
}
