export { type GrpcCodeOf, grpcError, isServerFault, toGrpcError } from './grpc-errors.ts';
export { decodeParameters, decodeRequestParameters, encodeParameters, parameterValue } from './infer-parameters.ts';
export {
  type DecodeInferRequestOptions,
  decodeModelInferRequest,
  type GrpcInferRequest,
  type GrpcRequestedOutput,
} from './infer-request.ts';
export { encodeModelInferResponse, type GrpcInferResponse } from './infer-response.ts';
export type * from './kserve-messages.ts';
export {
  callUnary,
  DEFAULT_MAX_RECEIVE_BYTES,
  invokeUnary,
  type KserveProtos,
  loadKserveClients,
  loadKserveProtos,
  MAX_MESSAGE_BYTES,
  PROTO_DIR,
  PROTO_LOADER_OPTIONS,
  passEncodedResponses,
  serializeModelInferResponse,
  type UnaryAnswer,
  type UnaryCallOptions,
} from './kserve-protos.ts';
export * from './serve-grpc.ts';
export { CONTENTS_FIELD, decodeTypedContents } from './typed-contents.ts';
export { type GrpcLogger, type UnaryImpl, unary } from './unary-handler.ts';
