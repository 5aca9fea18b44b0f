import type {
  ConfigDataType,
  DynamicBatchingConfig,
  InstanceGroupConfig,
  ModelConfig,
  ModelInputConfig,
  ModelOutputConfig,
  QueuePolicyConfig,
  VersionPolicy,
} from './model-config.ts';
import { MODEL_CONFIG_SCHEMA } from './model-config-schema.ts';
import { protoFromJson } from './proto-from-json.ts';
import { protoFromText } from './proto-from-text.ts';
import { ModelConfigError, type ProtoJson } from './proto-schema.ts';
import { parseTextFormat } from './text-format.ts';

/**
 * Parses a config.pbtxt into a ModelConfig with protobuf's defaults for absent fields (empty strings, 0, false,
 * FORMAT_NONE, KIND_AUTO) and Triton's default version policy (latest 1). Valid ModelConfig fields the server
 * does not model go to `extra` (compact protobuf JSON); an unknown field name is an error.
 *
 * @throws TextFormatError (`config.pbtxt:3:7: ...`) for bad syntax or a value that does not fit its field.
 * @example
 * const config = parseModelConfigText(SIMPLE_CONFIG_PBTXT, 'simple/config.pbtxt');
 * config.max_batch_size; // 8
 * config.input[0]; // { name: 'INPUT0', data_type: 'TYPE_INT32', format: 'FORMAT_NONE', dims: [16], ... }
 */
export function parseModelConfigText(text: string, source = 'config.pbtxt'): ModelConfig {
  const tree = parseTextFormat(text, { source });
  return modelConfigFromProto(protoFromText(tree, MODEL_CONFIG_SCHEMA, 'ModelConfig', source));
}

/**
 * Reads Triton's JSON form of a ModelConfig: what the config endpoint prints, and what a load request's `config`
 * override carries (then usually partial, e.g. `{"max_batch_size":"16"}`; missing fields take their defaults).
 * Integers may be numbers or numeric strings; a string argument is parsed as JSON first.
 *
 * @throws ModelConfigError naming the path (`input[0].dims[1]: expected an integer (int64), got "x"`); callers add
 *   their own context (`Invalid config override: ...`).
 * @example
 * parseModelConfigJson({ max_batch_size: '16' }).max_batch_size; // 16
 */
export function parseModelConfigJson(json: unknown): ModelConfig {
  let value = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (err) {
      throw new ModelConfigError(`not valid JSON: ${(err as Error).message}`);
    }
  }
  return modelConfigFromProto(protoFromJson(value, MODEL_CONFIG_SCHEMA, 'ModelConfig'));
}

type Obj = Record<string, unknown>;
const str = (o: Obj, k: string) => (o[k] as string | undefined) ?? '';
const num = (o: Obj, k: string) => (o[k] as number | undefined) ?? 0;
const flag = (o: Obj, k: string) => (o[k] as boolean | undefined) ?? false;
const nums = (o: Obj, k: string) => [...((o[k] as number[] | undefined) ?? [])];
const objs = (o: Obj, k: string) => (o[k] as Obj[] | undefined) ?? [];

/** Fields of `o` the typed view does not name; `undefined` when there are none, so configs compare cleanly. */
function rest(o: Obj, typed: readonly string[]): Obj | undefined {
  const entries = Object.entries(o).filter(([k]) => !typed.includes(k));
  return entries.length ? Object.fromEntries(entries) : undefined;
}

const withExtra = <T extends object>(value: T, extra: Obj | undefined): T => (extra ? { ...value, extra } : value);

/**
 * The typed view of compact protobuf JSON (already checked against the schema).
 *
 * @example
 * modelConfigFromProto({ name: 'm' }).version_policy; // { latest: { num_versions: 1 } }
 */
export function modelConfigFromProto(proto: ProtoJson): ModelConfig {
  const p = proto as Obj;
  const config: ModelConfig = {
    name: str(p, 'name'),
    platform: str(p, 'platform'),
    backend: str(p, 'backend'),
    version_policy: versionPolicy(p.version_policy as Obj | undefined),
    max_batch_size: num(p, 'max_batch_size'),
    input: objs(p, 'input').map(input),
    output: objs(p, 'output').map(output),
    instance_group: objs(p, 'instance_group').map(instanceGroup),
    default_model_filename: str(p, 'default_model_filename'),
    parameters: Object.fromEntries(
      Object.entries((p.parameters as Record<string, Obj> | undefined) ?? {}).map(([k, v]) => [
        k,
        { string_value: str(v, 'string_value') },
      ]),
    ),
    extra: rest(p, TOP_LEVEL_TYPED) ?? {},
  };
  if (p.dynamic_batching) config.dynamic_batching = dynamicBatching(p.dynamic_batching as Obj);
  return config;
}

const TOP_LEVEL_TYPED = [
  'name',
  'platform',
  'backend',
  'version_policy',
  'max_batch_size',
  'input',
  'output',
  'instance_group',
  'default_model_filename',
  'dynamic_batching',
  'parameters',
] as const;

/** Triton's default when no policy (or an empty one) is given: serve the latest version only. */
function versionPolicy(p: Obj | undefined): VersionPolicy {
  if (p?.all) return { all: {} };
  if (p?.specific) return { specific: { versions: nums(p.specific as Obj, 'versions') } };
  if (p?.latest) return { latest: { num_versions: num(p.latest as Obj, 'num_versions') } };
  return { latest: { num_versions: 1 } };
}

function reshape(o: Obj): { reshape?: { shape: number[] } } {
  return o.reshape ? { reshape: { shape: nums(o.reshape as Obj, 'shape') } } : {};
}

function input(o: Obj): ModelInputConfig {
  const typed: ModelInputConfig = {
    name: str(o, 'name'),
    data_type: (o.data_type as ConfigDataType | undefined) ?? 'TYPE_INVALID',
    format: (o.format as ModelInputConfig['format'] | undefined) ?? 'FORMAT_NONE',
    dims: nums(o, 'dims'),
    ...reshape(o),
    is_shape_tensor: flag(o, 'is_shape_tensor'),
    allow_ragged_batch: flag(o, 'allow_ragged_batch'),
    optional: flag(o, 'optional'),
  };
  const known = ['name', 'data_type', 'format', 'dims', 'reshape', 'is_shape_tensor', 'allow_ragged_batch', 'optional'];
  return withExtra(typed, rest(o, known));
}

function output(o: Obj): ModelOutputConfig {
  const typed: ModelOutputConfig = {
    name: str(o, 'name'),
    data_type: (o.data_type as ConfigDataType | undefined) ?? 'TYPE_INVALID',
    dims: nums(o, 'dims'),
    ...reshape(o),
    label_filename: str(o, 'label_filename'),
    is_shape_tensor: flag(o, 'is_shape_tensor'),
  };
  return withExtra(typed, rest(o, ['name', 'data_type', 'dims', 'reshape', 'label_filename', 'is_shape_tensor']));
}

function instanceGroup(o: Obj): InstanceGroupConfig {
  const typed: InstanceGroupConfig = {
    name: str(o, 'name'),
    kind: (o.kind as InstanceGroupConfig['kind'] | undefined) ?? 'KIND_AUTO',
    count: num(o, 'count'),
    gpus: nums(o, 'gpus'),
  };
  return withExtra(typed, rest(o, ['name', 'kind', 'count', 'gpus']));
}

function queuePolicy(o: Obj): QueuePolicyConfig {
  return {
    timeout_action: (o.timeout_action as QueuePolicyConfig['timeout_action'] | undefined) ?? 'REJECT',
    default_timeout_microseconds: num(o, 'default_timeout_microseconds'),
    allow_timeout_override: flag(o, 'allow_timeout_override'),
    max_queue_size: num(o, 'max_queue_size'),
  };
}

function dynamicBatching(o: Obj): DynamicBatchingConfig {
  const typed: DynamicBatchingConfig = {
    preferred_batch_size: nums(o, 'preferred_batch_size'),
    max_queue_delay_microseconds: num(o, 'max_queue_delay_microseconds'),
    preserve_ordering: flag(o, 'preserve_ordering'),
    priority_levels: num(o, 'priority_levels'),
    default_priority_level: num(o, 'default_priority_level'),
  };
  if (o.default_queue_policy) typed.default_queue_policy = queuePolicy(o.default_queue_policy as Obj);
  const known = [
    'preferred_batch_size',
    'max_queue_delay_microseconds',
    'preserve_ordering',
    'priority_levels',
    'default_priority_level',
    'default_queue_policy',
  ];
  return withExtra(typed, rest(o, known));
}
