/**
 * Realistic config.pbtxt files for the config tests, in the shapes Triton's own repositories use
 * (docs/examples/model_repository, qa). Test data only.
 */

/** Triton's densenet_onnx, with the extras a production config accumulates. */
export const DENSENET_CONFIG_PBTXT = `# Triton docs/examples/model_repository/densenet_onnx, plus production settings
name: "densenet_onnx"
platform: "onnxruntime_onnx"
max_batch_size : 0
version_policy: { specific: { versions: [1, 3] } }
input [
  {
    name: "data_0"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, 224 ]
    reshape { shape: [ 1, 3, 224, 224 ] }
  }
]
output [
  {
    name: "fc6_1"
    data_type: TYPE_FP32
    dims: [ 1000 ]
    reshape { shape: [ 1, 1000, 1, 1 ] }
    label_filename: "densenet_labels.txt"
  }
]
instance_group [ { count: 2 kind: KIND_CPU } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  default_queue_policy { max_queue_size: 16 }
}
parameters { key: "x" value { string_value: "y" } }
parameters: { key: "intra_op_thread_count" value: { string_value: "4" } }
optimization {
  graph { level: 1 }
  priority: PRIORITY_MAX
  execution_accelerators {
    gpu_execution_accelerator : [ {
      name : "tensorrt"
      parameters { key: "precision_mode" value: "FP16" }
      parameters { key: "max_workspace_size_bytes" value: "1073741824" }
    } ]
    cpu_execution_accelerator: [ { name: "openvino" } ]
  }
  input_pinned_memory { enable: false }
}
model_transaction_policy { decoupled: False }
response_cache { enable: true }
`;

/** A sequence model (Triton's simple_sequence shape) with implicit state and warmup: all of it lives in `extra`. */
export const SEQUENCE_CONFIG_PBTXT = `name: "simple_sequence"
backend: "onnxruntime"
max_batch_size: 8
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  oldest { max_candidate_sequences: 4 preferred_batch_size: [ 2, 4 ] }
  control_input [
    {
      name: "START"
      control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1 ] } ]
    },
    {
      name: "READY"
      control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] data_type: TYPE_INT32 } ]
    }
  ]
  state [
    {
      input_name: "INPUT_STATE"
      output_name: "OUTPUT_STATE"
      data_type: TYPE_INT32
      dims: [ 1 ]
      initial_state { name: "zeros" data_type: TYPE_INT32 dims: [ 1 ] zero_data: false }
    }
  ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
model_warmup [
  {
    name: "sample"
    batch_size: 1
    inputs { key: "INPUT" value: { data_type: TYPE_INT32 dims: [ 1 ] random_data: true } }
  }
]
`;

/** Fields nested inside typed messages that the typed view does not model, plus odd-but-valid syntax. */
export const NESTED_EXTRAS_PBTXT = `name: 'nested'
max_batch_size: 0x10
input < name: "IN" data_type: 8 dims: -1 dims: 4 is_non_linear_format_io: t allow_ragged_batch: 1 >
output: [ { name: "OUT" data_type: TYPE_STRING dims: [ -1 ] is_non_linear_format_io: True } ]
instance_group { name: "cpu" kind: KIND_CPU count: 3 host_policy: "policy_0" profile: [ "0", "1" ] passive: false }
dynamic_batching {
  priority_levels: 2
  default_priority_level: 1
  priority_queue_policy { key: 1 value { timeout_action: DELAY default_timeout_microseconds: 1000 } }
  priority_queue_policy { key: 2 value { allow_timeout_override: true } }
}
cc_model_filenames { key: "7.5" value: "model_t4.onnx" }
metric_tags { key: "team" value: "vision" }
runtime: "" ;
`;

/**
 * What Triton 24.x answers on GET /v2/models/model_test/config for an ONNX model with no config.pbtxt (captured
 * from a public bug report), before `is_non_linear_format_io` existed. Key order is part of the contract.
 */
export const TRITON_AUTOCOMPLETED_JSON =
  '{"name":"model_test","platform":"onnxruntime_onnx","backend":"onnxruntime","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":4,"input":[{"name":"images","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[3,-1,-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false}],"output":[{"name":"output","data_type":"TYPE_FP32","dims":[10],"label_filename":"","is_shape_tensor":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"dynamic_batching":{"preferred_batch_size":[4],"max_queue_delay_microseconds":0,"preserve_ordering":false,"priority_levels":0,"default_priority_level":0,"priority_queue_policy":{}},"instance_group":[{"name":"model_test","kind":"KIND_CPU","count":2,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"model.onnx","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]}';

/** The same JSON as our (newer) schema prints it: with is_non_linear_format_io on inputs and outputs. */
export function withNonLinearFlag(json: string): string {
  return json
    .replace('"optional":false}', '"optional":false,"is_non_linear_format_io":false}')
    .replace(
      '"is_shape_tensor":false}],"batch_input"',
      '"is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input"',
    );
}
