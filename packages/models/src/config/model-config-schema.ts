import { CONFIG_DATA_TYPES } from './model-config.ts';
import { enumOf, inOneof, mapOf, message, repeated, type SchemaRegistry, scalar } from './proto-schema.ts';

const str = scalar('string');
const bool = scalar('bool');
const int32 = scalar('int32');
const uint32 = scalar('uint32');
const int64 = scalar('int64');
const uint64 = scalar('uint64');
const DATA_TYPE = enumOf('DataType', CONFIG_DATA_TYPES);
const stringMap = mapOf('string', str);

/**
 * Triton's model_config.proto (package `inference`, common repo) as a schema table: every message a ModelConfig
 * can hold, fields in declaration order. The whole file is described, not only what the server honours, so a
 * valid Triton config never fails here and `extra` fields round-trip with their real types (an enum inside
 * `optimization` prints unquoted, a `map<string,string>` value stays quoted, a one-element `control_input` is
 * still a JSON array). Names and numbers: Triton's model_config.proto (Triton gRPC protos).
 *
 * @example
 * protoFromText(parseTextFormat(text), MODEL_CONFIG_SCHEMA, 'ModelConfig');
 * MODEL_CONFIG_SCHEMA.ModelInput.fields.dims; // { type: { kind: 'scalar', scalar: 'int64' }, label: 'repeated' }
 */
export const MODEL_CONFIG_SCHEMA: SchemaRegistry = {
  ModelRateLimiter: {
    name: 'ModelRateLimiter',
    fields: { resources: repeated(message('ModelRateLimiter.Resource')), priority: uint32 },
  },
  'ModelRateLimiter.Resource': {
    name: 'ModelRateLimiter.Resource',
    fields: { name: str, global: bool, count: uint32 },
  },
  ModelInstanceGroup: {
    name: 'ModelInstanceGroup',
    fields: {
      name: str,
      kind: enumOf('ModelInstanceGroup.Kind', ['KIND_AUTO', 'KIND_GPU', 'KIND_CPU', 'KIND_MODEL']),
      count: int32,
      rate_limiter: message('ModelRateLimiter'),
      gpus: repeated(int32),
      secondary_devices: repeated(message('ModelInstanceGroup.SecondaryDevice')),
      profile: repeated(str),
      passive: bool,
      host_policy: str,
    },
  },
  'ModelInstanceGroup.SecondaryDevice': {
    name: 'ModelInstanceGroup.SecondaryDevice',
    fields: { kind: enumOf('SecondaryDeviceKind', ['KIND_NVDLA']), device_id: int64 },
  },
  ModelTensorReshape: { name: 'ModelTensorReshape', fields: { shape: repeated(int64) } },
  ModelInput: {
    name: 'ModelInput',
    fields: {
      name: str,
      data_type: DATA_TYPE,
      format: enumOf('ModelInput.Format', ['FORMAT_NONE', 'FORMAT_NHWC', 'FORMAT_NCHW']),
      dims: repeated(int64),
      reshape: message('ModelTensorReshape'),
      is_shape_tensor: bool,
      allow_ragged_batch: bool,
      optional: bool,
      is_non_linear_format_io: bool,
    },
  },
  ModelOutput: {
    name: 'ModelOutput',
    fields: {
      name: str,
      data_type: DATA_TYPE,
      dims: repeated(int64),
      reshape: message('ModelTensorReshape'),
      label_filename: str,
      is_shape_tensor: bool,
      is_non_linear_format_io: bool,
    },
  },
  BatchInput: {
    name: 'BatchInput',
    fields: {
      kind: enumOf('BatchInput.Kind', [
        'BATCH_ELEMENT_COUNT',
        'BATCH_ACCUMULATED_ELEMENT_COUNT',
        'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO',
        'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE',
        'BATCH_ITEM_SHAPE',
        'BATCH_ITEM_SHAPE_FLATTEN',
      ]),
      target_name: repeated(str),
      data_type: DATA_TYPE,
      source_input: repeated(str),
    },
  },
  BatchOutput: {
    name: 'BatchOutput',
    fields: {
      target_name: repeated(str),
      kind: enumOf('BatchOutput.Kind', ['BATCH_SCATTER_WITH_INPUT_SHAPE']),
      source_input: repeated(str),
    },
  },
  ModelVersionPolicy: {
    name: 'ModelVersionPolicy',
    fields: {
      latest: inOneof('policy_choice', message('ModelVersionPolicy.Latest')),
      all: inOneof('policy_choice', message('ModelVersionPolicy.All')),
      specific: inOneof('policy_choice', message('ModelVersionPolicy.Specific')),
    },
  },
  'ModelVersionPolicy.Latest': { name: 'ModelVersionPolicy.Latest', fields: { num_versions: uint32 } },
  'ModelVersionPolicy.All': { name: 'ModelVersionPolicy.All', fields: {} },
  'ModelVersionPolicy.Specific': { name: 'ModelVersionPolicy.Specific', fields: { versions: repeated(int64) } },
  ModelOptimizationPolicy: {
    name: 'ModelOptimizationPolicy',
    fields: {
      graph: message('ModelOptimizationPolicy.Graph'),
      priority: enumOf('ModelPriority', ['PRIORITY_DEFAULT', 'PRIORITY_MAX', 'PRIORITY_MIN']),
      cuda: message('ModelOptimizationPolicy.Cuda'),
      execution_accelerators: message('ModelOptimizationPolicy.ExecutionAccelerators'),
      input_pinned_memory: message('ModelOptimizationPolicy.PinnedMemoryBuffer'),
      output_pinned_memory: message('ModelOptimizationPolicy.PinnedMemoryBuffer'),
      gather_kernel_buffer_threshold: uint32,
      eager_batching: bool,
    },
  },
  'ModelOptimizationPolicy.Graph': { name: 'ModelOptimizationPolicy.Graph', fields: { level: int32 } },
  'ModelOptimizationPolicy.Cuda': {
    name: 'ModelOptimizationPolicy.Cuda',
    fields: {
      graphs: bool,
      busy_wait_events: bool,
      graph_spec: repeated(message('ModelOptimizationPolicy.Cuda.GraphSpec')),
      output_copy_stream: bool,
    },
  },
  'ModelOptimizationPolicy.Cuda.GraphSpec': {
    name: 'ModelOptimizationPolicy.Cuda.GraphSpec',
    fields: {
      batch_size: int32,
      input: mapOf('string', message('ModelOptimizationPolicy.Cuda.GraphSpec.Shape')),
      graph_lower_bound: message('ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound'),
    },
  },
  'ModelOptimizationPolicy.Cuda.GraphSpec.Shape': {
    name: 'ModelOptimizationPolicy.Cuda.GraphSpec.Shape',
    fields: { dim: repeated(int64) },
  },
  'ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound': {
    name: 'ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound',
    fields: { batch_size: int32, input: mapOf('string', message('ModelOptimizationPolicy.Cuda.GraphSpec.Shape')) },
  },
  'ModelOptimizationPolicy.ExecutionAccelerators': {
    name: 'ModelOptimizationPolicy.ExecutionAccelerators',
    fields: {
      gpu_execution_accelerator: repeated(message('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator')),
      cpu_execution_accelerator: repeated(message('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator')),
    },
  },
  'ModelOptimizationPolicy.ExecutionAccelerators.Accelerator': {
    name: 'ModelOptimizationPolicy.ExecutionAccelerators.Accelerator',
    fields: { name: str, parameters: stringMap },
  },
  'ModelOptimizationPolicy.PinnedMemoryBuffer': {
    name: 'ModelOptimizationPolicy.PinnedMemoryBuffer',
    fields: { enable: bool },
  },
  ModelQueuePolicy: {
    name: 'ModelQueuePolicy',
    fields: {
      timeout_action: enumOf('ModelQueuePolicy.TimeoutAction', ['REJECT', 'DELAY']),
      default_timeout_microseconds: uint64,
      allow_timeout_override: bool,
      max_queue_size: uint32,
    },
  },
  ModelDynamicBatching: {
    name: 'ModelDynamicBatching',
    fields: {
      preferred_batch_size: repeated(int32),
      max_queue_delay_microseconds: uint64,
      preserve_ordering: bool,
      priority_levels: uint64,
      default_priority_level: uint64,
      default_queue_policy: message('ModelQueuePolicy'),
      priority_queue_policy: mapOf('uint64', message('ModelQueuePolicy')),
    },
  },
  ModelSequenceBatching: {
    name: 'ModelSequenceBatching',
    fields: {
      direct: inOneof('strategy_choice', message('ModelSequenceBatching.StrategyDirect')),
      oldest: inOneof('strategy_choice', message('ModelSequenceBatching.StrategyOldest')),
      max_sequence_idle_microseconds: uint64,
      control_input: repeated(message('ModelSequenceBatching.ControlInput')),
      state: repeated(message('ModelSequenceBatching.State')),
      iterative_sequence: bool,
    },
  },
  'ModelSequenceBatching.Control': {
    name: 'ModelSequenceBatching.Control',
    fields: {
      kind: enumOf('ModelSequenceBatching.Control.Kind', [
        'CONTROL_SEQUENCE_START',
        'CONTROL_SEQUENCE_READY',
        'CONTROL_SEQUENCE_END',
        'CONTROL_SEQUENCE_CORRID',
      ]),
      int32_false_true: repeated(int32),
      fp32_false_true: repeated(scalar('float')),
      bool_false_true: repeated(bool),
      data_type: DATA_TYPE,
    },
  },
  'ModelSequenceBatching.ControlInput': {
    name: 'ModelSequenceBatching.ControlInput',
    fields: { name: str, control: repeated(message('ModelSequenceBatching.Control')) },
  },
  'ModelSequenceBatching.InitialState': {
    name: 'ModelSequenceBatching.InitialState',
    fields: {
      data_type: DATA_TYPE,
      dims: repeated(int64),
      zero_data: inOneof('state_data', bool),
      data_file: inOneof('state_data', str),
      name: str,
    },
  },
  'ModelSequenceBatching.State': {
    name: 'ModelSequenceBatching.State',
    fields: {
      input_name: str,
      output_name: str,
      data_type: DATA_TYPE,
      dims: repeated(int64),
      initial_state: repeated(message('ModelSequenceBatching.InitialState')),
      use_same_buffer_for_input_output: bool,
      use_growable_memory: bool,
    },
  },
  'ModelSequenceBatching.StrategyDirect': {
    name: 'ModelSequenceBatching.StrategyDirect',
    fields: { max_queue_delay_microseconds: uint64, minimum_slot_utilization: scalar('float') },
  },
  'ModelSequenceBatching.StrategyOldest': {
    name: 'ModelSequenceBatching.StrategyOldest',
    fields: {
      max_candidate_sequences: int32,
      preferred_batch_size: repeated(int32),
      max_queue_delay_microseconds: uint64,
      preserve_ordering: bool,
    },
  },
  ModelEnsembling: {
    name: 'ModelEnsembling',
    fields: { step: repeated(message('ModelEnsembling.Step')), max_inflight_responses: uint32 },
  },
  'ModelEnsembling.Step': {
    name: 'ModelEnsembling.Step',
    fields: {
      model_name: str,
      model_version: int64,
      input_map: stringMap,
      output_map: stringMap,
      model_namespace: str,
    },
  },
  ModelParameter: { name: 'ModelParameter', fields: { string_value: str } },
  ModelWarmup: {
    name: 'ModelWarmup',
    fields: { name: str, batch_size: uint32, inputs: mapOf('string', message('ModelWarmup.Input')), count: uint32 },
  },
  'ModelWarmup.Input': {
    name: 'ModelWarmup.Input',
    fields: {
      data_type: DATA_TYPE,
      dims: repeated(int64),
      zero_data: inOneof('input_data_type', bool),
      random_data: inOneof('input_data_type', bool),
      input_data_file: inOneof('input_data_type', str),
    },
  },
  ModelOperations: { name: 'ModelOperations', fields: { op_library_filename: repeated(str) } },
  ModelTransactionPolicy: { name: 'ModelTransactionPolicy', fields: { decoupled: bool } },
  ModelRepositoryAgents: {
    name: 'ModelRepositoryAgents',
    fields: { agents: repeated(message('ModelRepositoryAgents.Agent')) },
  },
  'ModelRepositoryAgents.Agent': { name: 'ModelRepositoryAgents.Agent', fields: { name: str, parameters: stringMap } },
  ModelResponseCache: { name: 'ModelResponseCache', fields: { enable: bool } },
  ModelMetrics: {
    name: 'ModelMetrics',
    fields: { metric_control: repeated(message('ModelMetrics.MetricControl')) },
  },
  'ModelMetrics.MetricControl': {
    name: 'ModelMetrics.MetricControl',
    fields: {
      metric_identifier: message('ModelMetrics.MetricControl.MetricIdentifier'),
      histogram_options: inOneof('metric_options', message('ModelMetrics.MetricControl.HistogramOptions')),
    },
  },
  'ModelMetrics.MetricControl.MetricIdentifier': {
    name: 'ModelMetrics.MetricControl.MetricIdentifier',
    fields: { family: str },
  },
  'ModelMetrics.MetricControl.HistogramOptions': {
    name: 'ModelMetrics.MetricControl.HistogramOptions',
    fields: { buckets: repeated(scalar('double')) },
  },
  ModelConfig: {
    name: 'ModelConfig',
    fields: {
      name: str,
      platform: str,
      backend: str,
      runtime: str,
      version_policy: message('ModelVersionPolicy'),
      max_batch_size: int32,
      input: repeated(message('ModelInput')),
      output: repeated(message('ModelOutput')),
      batch_input: repeated(message('BatchInput')),
      batch_output: repeated(message('BatchOutput')),
      optimization: message('ModelOptimizationPolicy'),
      dynamic_batching: inOneof('scheduling_choice', message('ModelDynamicBatching')),
      sequence_batching: inOneof('scheduling_choice', message('ModelSequenceBatching')),
      ensemble_scheduling: inOneof('scheduling_choice', message('ModelEnsembling')),
      instance_group: repeated(message('ModelInstanceGroup')),
      default_model_filename: str,
      cc_model_filenames: stringMap,
      metric_tags: stringMap,
      parameters: mapOf('string', message('ModelParameter')),
      model_warmup: repeated(message('ModelWarmup')),
      model_operations: message('ModelOperations'),
      model_transaction_policy: message('ModelTransactionPolicy'),
      model_repository_agents: message('ModelRepositoryAgents'),
      response_cache: message('ModelResponseCache'),
      model_metrics: message('ModelMetrics'),
    },
  },
};
