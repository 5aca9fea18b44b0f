export {
  type AutoCompleteOptions,
  autoCompleteConfig,
  BUILT_IN_BACKENDS,
  type BuiltInBackend,
  isBuiltInBackend,
  type ModelSignatureInfo,
} from './config/auto-complete.ts';
export { apiDatatype, configDataType } from './config/config-datatypes.ts';
export { normalizeInstanceGroups } from './config/instance-groups.ts';
export { readLabels } from './config/labels.ts';
export {
  CONFIG_DATA_TYPES,
  type ConfigDataType,
  type DynamicBatchingConfig,
  type InstanceGroupConfig,
  type InstanceGroupKind,
  type ModelConfig,
  type ModelInputConfig,
  type ModelOutputConfig,
  type QueuePolicyConfig,
  type VersionPolicy,
} from './config/model-config.ts';
export { MODEL_CONFIG_SCHEMA } from './config/model-config-schema.ts';
export { modelConfigFromProto, parseModelConfigJson, parseModelConfigText } from './config/parse-model-config.ts';
export { modelConfigToJson, modelConfigToProto, modelConfigToText } from './config/print-model-config.ts';
export { protoFromJson } from './config/proto-from-json.ts';
export { protoFromText } from './config/proto-from-text.ts';
export {
  enumOf,
  type FieldSchema,
  type FieldType,
  inOneof,
  type MessageSchema,
  ModelConfigError,
  mapOf,
  message,
  type ProtoJson,
  type ProtoJsonValue,
  repeated,
  type ScalarType,
  type SchemaRegistry,
  scalar,
} from './config/proto-schema.ts';
export { type ProtoJsonPrintOptions, protoToFullJson } from './config/proto-to-json.ts';
export { protoToText } from './config/proto-to-text.ts';
export {
  type SequenceBatching,
  type SequenceControl,
  type SequenceControlKind,
  type SequenceState,
  sequenceBatchingOf,
} from './config/sequence-batching.ts';
export {
  addTextValue,
  buildTextMessage,
  emptyTextMessage,
  parseTextFormat,
  printTextFormat,
  type TextEnum,
  type TextField,
  TextFormatError,
  type TextInput,
  type TextInputValue,
  type TextMessage,
  type TextParseOptions,
  type TextPosition,
  type TextPrintOptions,
  type TextScalar,
  type TextValue,
  textEnum,
} from './config/text-format.ts';
export { quoteTextString } from './config/text-format-print.ts';
export { validateConfigAgainstModel } from './config/validate-config.ts';
export { selectVersions } from './config/version-policy.ts';
export {
  buildClassifierModel,
  CLASSIFIER_CONFIG_PBTXT,
  CLASSIFIER_LABELS,
  CLASSIFIER_LAYERS,
} from './examples/classifier.ts';
export { buildDensenetModel, DENSENET_CONFIG_PBTXT, writeDensenetModel } from './examples/densenet.ts';
export { type GenerateOptions, generateExampleRepository } from './examples/generate-repository.ts';
export {
  buildGenerativeModel,
  GENERATIVE_CONFIG_PBTXT,
  GENERATIVE_TEXT,
  writeGenerativeModel,
} from './examples/generative.ts';
export {
  buildIdentityModel,
  IDENTITY_DATATYPES,
  type IdentityDatatype,
  identityModelName,
  writeIdentityModels,
} from './examples/identity.ts';
export {
  buildSimpleDynaSequenceModel,
  buildSimpleSequenceModel,
  SIMPLE_DYNA_SEQUENCE_CONFIG_PBTXT,
  SIMPLE_SEQUENCE_CONFIG_PBTXT,
  SIMPLE_STRING_DYNA_SEQUENCE_CONFIG_PBTXT,
  writeSequenceModels,
} from './examples/sequence-models.ts';
export { buildSimpleModel, SIMPLE_CONFIG_PBTXT } from './examples/simple.ts';
export {
  buildCustomIdentityInt32Model,
  buildSimpleInt8Model,
  buildSimpleStringModel,
  CUSTOM_IDENTITY_INT32_CONFIG_PBTXT,
  REPEAT_INT32_CONFIG_PBTXT,
  SIMPLE_IDENTITY_CONFIG_PBTXT,
  SIMPLE_INT8_CONFIG_PBTXT,
  SIMPLE_STRING_CONFIG_PBTXT,
  writeTritonExampleModels,
} from './examples/triton-examples.ts';
export { writeModelVersion } from './examples/write-model.ts';
export {
  buildModel,
  type Dim,
  float32RawData,
  type InitializerSpec,
  type ModelSpec,
  type NodeSpec,
  OnnxElemType,
  type SubgraphSpec,
  type ValueSpec,
} from './onnx/builder.ts';
export { readOnnxSignature } from './onnx/onnx-signature.ts';
export { isStraightLineGraph } from './onnx/straight-line.ts';
export { modelFunctionId, modelVersionId } from './repository/repository-functions.ts';
export {
  compareModelVersions,
  type ModelVersionEntry,
  type ScanOptions,
  scanModelRepository,
} from './repository/scan-repository.ts';
