import type { ModelConfig } from './model-config.ts';
import { MODEL_CONFIG_SCHEMA } from './model-config-schema.ts';
import { protoFromJson } from './proto-from-json.ts';
import type { ProtoJson } from './proto-schema.ts';
import { type ProtoJsonPrintOptions, protoToFullJson } from './proto-to-json.ts';
import { protoToText } from './proto-to-text.ts';
import { printTextFormat } from './text-format.ts';

type Obj = Record<string, unknown>;

/** Typed fields over their `extra` (a typed field wins if both name it), minus the `extra` key itself. */
function merged<T extends { extra?: Obj }>(value: T): Obj {
  const { extra, ...typed } = value;
  return { ...extra, ...typed };
}

/**
 * The compact protobuf JSON of a config (defaults left out), checked against the schema: a hand-built `extra`
 * that names an unknown field or a wrong type fails here rather than printing something Triton would reject.
 *
 * @throws ModelConfigError
 * @example
 * modelConfigToProto(parseModelConfigText('name: "m"')); // { name: 'm', version_policy: { latest: { num_versions: 1 } } }
 */
export function modelConfigToProto(config: ModelConfig): ProtoJson {
  const loose: Obj = {
    ...merged(config),
    input: config.input.map(merged),
    output: config.output.map(merged),
    instance_group: config.instance_group.map(merged),
    dynamic_batching: config.dynamic_batching ? merged(config.dynamic_batching) : null,
  };
  return protoFromJson(loose, MODEL_CONFIG_SCHEMA, 'ModelConfig');
}

/**
 * Writes a config as config.pbtxt text: schema order, defaults left out, lists in Triton's style.
 *
 * @example
 * modelConfigToText(parseModelConfigText(SIMPLE_CONFIG_PBTXT));
 * // 'name: "simple"\nplatform: "onnxruntime_onnx"\nversion_policy {\n  latest {\n    num_versions: 1\n ...'
 */
export function modelConfigToText(config: ModelConfig): string {
  return printTextFormat(protoToText(modelConfigToProto(config), MODEL_CONFIG_SCHEMA, 'ModelConfig'));
}

/**
 * The config endpoint's JSON (`GET /v2/models/{m}/config`): original field names, every field at its default
 * printed (protobuf's always-print-primitive-fields), enums by name, 64-bit integers as JSON numbers as Triton
 * sends them, `extra` fields in their places.
 *
 * @example
 * modelConfigToJson(config).max_batch_size; // 8
 * modelConfigToJson(config).input; // [{ name: 'INPUT0', data_type: 'TYPE_INT32', format: 'FORMAT_NONE', dims: [16], ... }]
 */
export function modelConfigToJson(config: ModelConfig, opts: ProtoJsonPrintOptions = {}): Record<string, unknown> {
  return protoToFullJson(modelConfigToProto(config), MODEL_CONFIG_SCHEMA, 'ModelConfig', opts);
}
