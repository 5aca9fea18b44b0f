import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/** The repository's own .proto files; `trtis/` holds v1's, which import v2's `model_config.proto` from here. */
const PROTO_DIR = fileURLToPath(new URL('../../../../proto/', import.meta.url));

/** The v1 messages the HTTP and gRPC surfaces read and write, by their name in package nvidia.inferenceserver. */
export const V1_MESSAGES = [
  'RequestStatus',
  'InferRequestHeader',
  'InferResponseHeader',
  'ServerStatus',
  'ModelRepositoryIndex',
] as const;
export type V1Message = (typeof V1_MESSAGES)[number];

export const V1_PACKAGE = 'nvidia.inferenceserver';

let cached: protobuf.Root | undefined;

/**
 * `proto/trtis/*.proto` (with v2's `model_config.proto`, which they import for ModelConfig and DataType) as one
 * protobufjs root, loaded once per process. Field names stay as written (`batch_byte_size`), as the text format
 * and the v1 JSON use them.
 */
export function loadV1Root(): protobuf.Root {
  if (!cached) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(PROTO_DIR, target));
    root.loadSync('trtis/grpc_service.proto', { keepCase: true });
    root.resolveAll();
    cached = root;
  }
  return cached;
}

/** A v1 message type by its short name (`ServerStatus`) or a full name (`nvidia.inferenceserver.InferRequest`). */
export function v1Type(name: string): protobuf.Type {
  return loadV1Root().lookupType(name.startsWith(`${V1_PACKAGE}.`) ? name : `${V1_PACKAGE}.${name}`);
}
