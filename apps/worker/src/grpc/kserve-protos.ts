/**
 * Moved to `@nvcf/kserve-grpc` (shared with the gateway's gRPC port); kept for callers that import this
 * path directly (the benchmark).
 */
export {
  type KserveProtos,
  loadKserveClients,
  loadKserveProtos,
  MAX_MESSAGE_BYTES,
  PROTO_DIR,
  PROTO_LOADER_OPTIONS,
} from '@nvcf/kserve-grpc';
