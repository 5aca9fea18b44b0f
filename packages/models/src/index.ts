export { buildClassifierModel, CLASSIFIER_LAYERS } from './examples/classifier.ts';
export { type GenerateOptions, generateExampleRepository } from './examples/generate-repository.ts';
export {
  buildIdentityModel,
  IDENTITY_DATATYPES,
  type IdentityDatatype,
  identityModelName,
  writeIdentityModels,
} from './examples/identity.ts';
export { buildSimpleModel, SIMPLE_CONFIG_PBTXT } from './examples/simple.ts';
export { writeModelVersion } from './examples/write-model.ts';
export {
  buildModel,
  type Dim,
  type InitializerSpec,
  type ModelSpec,
  type NodeSpec,
  OnnxElemType,
  type ValueSpec,
} from './onnx/builder.ts';
export {
  compareModelVersions,
  type ModelVersionEntry,
  type ScanOptions,
  scanModelRepository,
} from './repository/scan-repository.ts';
export { EXECUTION_PROVIDERS, type ExecutionProvider, parseExecutionProviders } from './runtime/execution-providers.ts';
export type { UnsupportedTensor } from './runtime/model-signature.ts';
export type { LoadedModel } from './runtime/onnx-runner.ts';
export { SessionCache, type SessionCacheOptions, type SessionLogger } from './runtime/session-cache.ts';
