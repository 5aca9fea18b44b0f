export {
  ASSET_DESCRIPTION_HEADER,
  type Asset,
  type AssetBody,
  type AssetSummary,
  AssetsApi,
  type CreateAssetRequest,
  type CreatedAsset,
  type UploadOptions,
} from './assets.ts';
export {
  type AuthorizationOptions,
  AuthorizationsApi,
  type AuthorizedParty,
  type FunctionAuthorizations,
} from './authorizations.ts';
export { NvcfClient } from './client.ts';
export { type ClusterGroup, ClusterGroupsApi, type InstanceType } from './cluster-groups.ts';
export {
  type ApiBodyFormat,
  type CreateFunctionRequest,
  type DeploymentDto,
  type DeploymentRequest,
  type DeploymentSpecification,
  DeploymentsApi,
  type FunctionDto,
  type FunctionInstance,
  type FunctionStatus,
  FunctionsApi,
  type FunctionType,
  type FunctionVisibility,
  type HealthCheck,
  type KeyValue,
  type ListFunctionsOptions,
  type ModelReference,
  type QueueDetails,
  type QueuePosition,
  QueuesApi,
  type RequestOptions,
  type Secret,
  type TensorSpec,
  type UpdateMetadataRequest,
  type UpdateSecretsRequest,
} from './control-plane.ts';
export { errorFromResponse, NvcfConnectionError, NvcfError, type Problem, parseRetryAfter } from './errors.ts';
export { type InvokeOptions, type InvokeResult, invokeFunction, MAX_POLL_SECONDS, type Progress } from './invoke.ts';
export { type ApiKey, type CreatedKey, type CreateKeyRequest, KeysApi } from './keys.ts';
export {
  decodeKserveResponse,
  floatToHalfBits,
  halfBitsToFloat,
  type InferOptions,
  type InferResult,
  KSERVE_DATATYPES,
  type KserveData,
  type KserveDatatype,
  type KserveRequest,
  type KserveRequestOptions,
  type KserveResponse,
  type KserveTensor,
  kserveRequest,
  type RequestedOutput,
  type TensorInput,
  tensorStrings,
} from './kserve.ts';
export { type StreamEvent, type StreamOptions, streamFunction } from './stream.ts';
export { type ClientOptions, type RetryOptions, type SendOptions, Transport } from './transport.ts';
