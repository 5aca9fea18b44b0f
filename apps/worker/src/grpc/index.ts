export { createHealthService } from './health-service.ts';
export { decodeModelInferRequest } from './infer-request-grpc.ts';
export { encodeModelInferResponse } from './infer-response-grpc.ts';
export {
  type KserveGrpcServer,
  type KserveGrpcServerOptions,
  startKserveGrpcServer,
} from './kserve-grpc-server.ts';
export { createKserveGrpcService, type KserveGrpcServiceOptions } from './kserve-grpc-service.ts';
export {
  loadKserveClients,
  loadKserveProtos,
  MAX_MESSAGE_BYTES,
  PROTO_DIR,
  PROTO_LOADER_OPTIONS,
} from './kserve-protos.ts';
