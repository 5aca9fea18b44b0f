/**
 * Triton's ModelConfig (model_config.proto, package `inference`) as this project holds it: protobuf JSON
 * with the original (snake_case) field names and enum names as strings, the form Triton's
 * `GET /v2/models/{m}/config` prints and `config.pbtxt` spells (Triton model configuration extension;
 * Triton model configuration). Fields the server honours are typed; any other field of a parsed config is
 * kept in `extra` and printed back as it came.
 */
export const CONFIG_DATA_TYPES = [
  'TYPE_INVALID',
  'TYPE_BOOL',
  'TYPE_UINT8',
  'TYPE_UINT16',
  'TYPE_UINT32',
  'TYPE_UINT64',
  'TYPE_INT8',
  'TYPE_INT16',
  'TYPE_INT32',
  'TYPE_INT64',
  'TYPE_FP16',
  'TYPE_FP32',
  'TYPE_FP64',
  'TYPE_STRING',
  'TYPE_BF16',
] as const;
export type ConfigDataType = (typeof CONFIG_DATA_TYPES)[number];

export type InstanceGroupKind = 'KIND_AUTO' | 'KIND_GPU' | 'KIND_CPU' | 'KIND_MODEL';

export interface ModelInputConfig {
  name: string;
  data_type: ConfigDataType;
  format: 'FORMAT_NONE' | 'FORMAT_NHWC' | 'FORMAT_NCHW';
  /** Without the batch dimension when max_batch_size > 0; -1 = variable. */
  dims: number[];
  reshape?: { shape: number[] };
  is_shape_tensor: boolean;
  allow_ragged_batch: boolean;
  optional: boolean;
  /** Other ModelInput fields (is_non_linear_format_io), compact protobuf JSON; absent when there are none. */
  extra?: Record<string, unknown>;
}

export interface ModelOutputConfig {
  name: string;
  data_type: ConfigDataType;
  dims: number[];
  reshape?: { shape: number[] };
  /** Relative to the model directory; line i labels class index i (classification extension). */
  label_filename: string;
  is_shape_tensor: boolean;
  /** Other ModelOutput fields (is_non_linear_format_io), compact protobuf JSON; absent when there are none. */
  extra?: Record<string, unknown>;
}

export type VersionPolicy =
  | { latest: { num_versions: number } }
  | { all: Record<string, never> }
  | { specific: { versions: number[] } };

export interface InstanceGroupConfig {
  name: string;
  kind: InstanceGroupKind;
  count: number;
  gpus: number[];
  /** Other fields (rate_limiter, secondary_devices, profile, passive, host_policy); absent when there are none. */
  extra?: Record<string, unknown>;
}

export interface QueuePolicyConfig {
  timeout_action: 'REJECT' | 'DELAY';
  default_timeout_microseconds: number;
  allow_timeout_override: boolean;
  max_queue_size: number;
}

export interface DynamicBatchingConfig {
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  preserve_ordering: boolean;
  priority_levels: number;
  default_priority_level: number;
  default_queue_policy?: QueuePolicyConfig;
  /** Other fields (priority_queue_policy), compact protobuf JSON; absent when there are none. */
  extra?: Record<string, unknown>;
}

export interface ModelConfig {
  name: string;
  platform: string;
  backend: string;
  version_policy: VersionPolicy;
  max_batch_size: number;
  input: ModelInputConfig[];
  output: ModelOutputConfig[];
  instance_group: InstanceGroupConfig[];
  default_model_filename: string;
  dynamic_batching?: DynamicBatchingConfig;
  parameters: Record<string, { string_value: string }>;
  /** Other ModelConfig fields found in the source, kept verbatim (protobuf JSON form). */
  extra: Record<string, unknown>;
}
