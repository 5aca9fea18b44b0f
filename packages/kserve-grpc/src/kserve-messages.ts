/**
 * The messages of grpc_service.proto as `@grpc/proto-loader` hands them over with
 * PROTO_LOADER_OPTIONS (kserve-protos.ts): snake_case names, 64-bit integers as decimal strings,
 * bytes as Buffers, absent messages as null. Outgoing messages may use numbers for 64-bit fields and
 * may leave any field out.
 */

/** 64-bit integers: decimal strings when decoded; numbers or strings when encoded. */
export type Int64 = string | number;

export interface InferParameterMsg {
  bool_param?: boolean;
  int64_param?: Int64;
  string_param?: string;
  double_param?: number;
  uint64_param?: Int64;
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'double_param' | 'uint64_param';
}

export type InferParameterMap = Record<string, InferParameterMsg>;

export interface InferTensorContentsMsg {
  bool_contents: boolean[];
  int_contents: number[];
  int64_contents: Int64[];
  uint_contents: number[];
  uint64_contents: Int64[];
  fp32_contents: number[];
  fp64_contents: number[];
  bytes_contents: Uint8Array[];
}

export interface InferInputTensorMsg {
  name: string;
  datatype: string;
  shape: Int64[];
  parameters: InferParameterMap;
  contents: InferTensorContentsMsg | null;
}

export interface InferRequestedOutputTensorMsg {
  name: string;
  parameters: InferParameterMap;
}

export interface ModelInferRequestMsg {
  model_name: string;
  model_version: string;
  id: string;
  parameters: InferParameterMap;
  inputs: InferInputTensorMsg[];
  outputs: InferRequestedOutputTensorMsg[];
  raw_input_contents: Uint8Array[];
}

export interface InferOutputTensorMsg {
  name: string;
  datatype: string;
  shape: Int64[];
  parameters: InferParameterMap;
}

export interface ModelInferResponseMsg {
  model_name: string;
  model_version: string;
  id: string;
  parameters: InferParameterMap;
  outputs: InferOutputTensorMsg[];
  raw_output_contents: Uint8Array[];
}

export interface ModelStreamInferResponseMsg {
  error_message: string;
  infer_response: ModelInferResponseMsg | null;
}

/** ModelReady, ModelMetadata, ModelConfig, ModelStatistics requests. */
export interface NameVersionMsg {
  name: string;
  version: string;
}

export interface ModelRepositoryParameterMsg {
  bool_param?: boolean;
  int64_param?: Int64;
  string_param?: string;
  bytes_param?: Uint8Array;
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'bytes_param';
}

export interface RepositoryIndexRequestMsg {
  repository_name: string;
  ready: boolean;
}

export interface RepositoryModelRequestMsg {
  repository_name: string;
  model_name: string;
  parameters: Record<string, ModelRepositoryParameterMsg>;
}

export interface HealthCheckRequestMsg {
  service: string;
}
