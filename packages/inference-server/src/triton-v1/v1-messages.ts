/**
 * The v1 messages this server reads and writes, as TypeScript shapes of their compact protobuf JSON form
 * (v1-codec.ts): original field names, enums by name, integers as numbers, fields at their default absent.
 * Field numbers and meaning: proto/trtis/*.proto.
 */

export const REQUEST_STATUS_CODES = [
  'INVALID',
  'SUCCESS',
  'UNKNOWN',
  'INTERNAL',
  'NOT_FOUND',
  'INVALID_ARG',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
] as const;
export type RequestStatusCode = (typeof REQUEST_STATUS_CODES)[number];

export interface RequestStatusMsg {
  code?: RequestStatusCode;
  msg?: string;
  server_id?: string;
  request_id?: number;
}

export interface SharedMemoryMsg {
  name?: string;
  offset?: number;
  byte_size?: number;
}

export interface RequestInputMsg {
  name?: string;
  dims?: number[];
  batch_byte_size?: number;
  /** Pre-1.0 spelling: the size of one batch item (text format only, see v1Schema). */
  byte_size?: number;
  shared_memory?: SharedMemoryMsg;
}

export interface RequestOutputMsg {
  name?: string;
  cls?: { count?: number };
  /** Pre-1.0 size hint (text format only), ignored. */
  byte_size?: number;
  shared_memory?: SharedMemoryMsg;
}

export interface InferRequestHeaderMsg {
  batch_size?: number;
  input?: RequestInputMsg[];
  output?: RequestOutputMsg[];
  correlation_id?: number;
  id?: number;
  flags?: number;
  priority?: number;
  timeout_microseconds?: number;
}

/** InferRequestHeader.Flag bits. */
export const FLAG_SEQUENCE_START = 1;
export const FLAG_SEQUENCE_END = 2;

export interface ClassMsg {
  idx?: number;
  value?: number;
  label?: string;
}

export interface ClassesMsg {
  cls?: ClassMsg[];
}

export interface ResponseOutputMsg {
  name: string;
  raw?: { dims?: number[]; batch_byte_size?: number };
  batch_classes?: ClassesMsg[];
  /** A ModelConfig DataType name, e.g. `TYPE_INT32`. */
  data_type?: string;
}

export interface InferResponseHeaderMsg {
  model_name: string;
  model_version: number;
  batch_size: number;
  output: ResponseOutputMsg[];
  id?: number;
}

export type ModelReadyState =
  | 'MODEL_UNKNOWN'
  | 'MODEL_READY'
  | 'MODEL_UNAVAILABLE'
  | 'MODEL_LOADING'
  | 'MODEL_UNLOADING';
export type ServerReadyState =
  | 'SERVER_INVALID'
  | 'SERVER_INITIALIZING'
  | 'SERVER_READY'
  | 'SERVER_EXITING'
  | 'SERVER_FAILED_TO_INITIALIZE';

export interface StatDurationMsg {
  count: number;
  total_time_ns: number;
}

export interface InferRequestStatsMsg {
  success: StatDurationMsg;
  failed: StatDurationMsg;
  compute: StatDurationMsg;
  queue: StatDurationMsg;
  compute_input: StatDurationMsg;
  compute_infer: StatDurationMsg;
  compute_output: StatDurationMsg;
}

export interface ModelVersionStatusMsg {
  ready_state: ModelReadyState;
  /** Keyed by batch size. */
  infer_stats?: Record<string, InferRequestStatsMsg>;
  model_execution_count?: number;
  model_inference_count?: number;
  ready_state_reason?: { message: string };
  last_inference_timestamp_milliseconds?: number;
}

export interface ModelStatusMsg {
  /** ModelConfig in compact protobuf JSON (`modelConfigToProto`). */
  config?: object;
  /** Keyed by version number. */
  version_status?: Record<string, ModelVersionStatusMsg>;
}

export interface ServerStatusMsg {
  id: string;
  version: string;
  uptime_ns: number;
  model_status: Record<string, ModelStatusMsg>;
  status_stats: { success: StatDurationMsg };
  ready_state: ServerReadyState;
  health_stats: { success: StatDurationMsg };
  model_control_stats: { success: StatDurationMsg };
  shm_control_stats: { success: StatDurationMsg };
  repository_stats: { success: StatDurationMsg };
}

export interface ModelRepositoryIndexMsg {
  models: { name: string }[];
}
