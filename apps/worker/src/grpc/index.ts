export {
  decodeModelInferRequest,
  encodeModelInferResponse,
  loadKserveClients,
  loadKserveProtos,
  MAX_MESSAGE_BYTES,
  PROTO_DIR,
  PROTO_LOADER_OPTIONS,
} from '@nvcf/kserve-grpc';
export { createHealthService } from './health-service.ts';
export {
  type KserveGrpcServer,
  type KserveGrpcServerOptions,
  startKserveGrpcServer,
} from './kserve-grpc-server.ts';
export { createKserveGrpcService, type KserveGrpcServiceOptions } from './kserve-grpc-service.ts';
