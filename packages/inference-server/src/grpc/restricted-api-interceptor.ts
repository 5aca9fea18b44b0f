import {
  type Metadata,
  ResponderBuilder,
  ServerInterceptingCall,
  type ServerInterceptor,
  ServerListenerBuilder,
  status,
} from '@grpc/grpc-js';
import {
  GRPC_RESTRICTED_PREFIX,
  grpcRestrictedMessage,
  type RestrictedApiGroup,
  type RestrictedApis,
  unmetRestriction,
} from '../access/restricted-apis.ts';

/** Each RPC of this server and the group Triton files it under (v1's Status shows metadata, config and stats). */
const METHOD_GROUPS: Readonly<Record<string, readonly RestrictedApiGroup[]>> = {
  '/inference.GRPCInferenceService/ServerLive': ['health'],
  '/inference.GRPCInferenceService/ServerReady': ['health'],
  '/inference.GRPCInferenceService/ModelReady': ['health'],
  '/grpc.health.v1.Health/Check': ['health'],
  '/inference.GRPCInferenceService/ServerMetadata': ['metadata'],
  '/inference.GRPCInferenceService/ModelMetadata': ['metadata'],
  '/inference.GRPCInferenceService/ModelInfer': ['inference'],
  '/inference.GRPCInferenceService/ModelStreamInfer': ['inference'],
  '/inference.GRPCInferenceService/ModelConfig': ['model-config'],
  '/inference.GRPCInferenceService/ModelStatistics': ['statistics'],
  '/inference.GRPCInferenceService/RepositoryIndex': ['model-repository'],
  '/inference.GRPCInferenceService/RepositoryModelLoad': ['model-repository'],
  '/inference.GRPCInferenceService/RepositoryModelUnload': ['model-repository'],
  '/inference.GRPCInferenceService/SystemSharedMemoryStatus': ['shared-memory'],
  '/inference.GRPCInferenceService/SystemSharedMemoryRegister': ['shared-memory'],
  '/inference.GRPCInferenceService/SystemSharedMemoryUnregister': ['shared-memory'],
  '/inference.GRPCInferenceService/CudaSharedMemoryStatus': ['shared-memory'],
  '/inference.GRPCInferenceService/CudaSharedMemoryRegister': ['shared-memory'],
  '/inference.GRPCInferenceService/CudaSharedMemoryUnregister': ['shared-memory'],
  '/inference.GRPCInferenceService/TraceSetting': ['trace'],
  '/inference.GRPCInferenceService/LogSettings': ['logging'],
  '/nvidia.inferenceserver.GRPCService/Status': ['metadata', 'model-config', 'statistics'],
  '/nvidia.inferenceserver.GRPCService/Health': ['health'],
  '/nvidia.inferenceserver.GRPCService/Infer': ['inference'],
  '/nvidia.inferenceserver.GRPCService/StreamInfer': ['inference'],
  '/nvidia.inferenceserver.GRPCService/ModelControl': ['model-repository'],
  '/nvidia.inferenceserver.GRPCService/SharedMemoryControl': ['shared-memory'],
};

/** The API groups of a method path; an unknown path is in none (grpc-js answers it UNIMPLEMENTED). */
const grpcApiGroups = (path: string): readonly RestrictedApiGroup[] => METHOD_GROUPS[path] ?? [];

const metadataValue = (metadata: Metadata, key: string) => {
  const [value] = metadata.get(`${GRPC_RESTRICTED_PREFIX}${key}`);
  return typeof value === 'string' ? value : undefined;
};

/**
 * Triton's `--grpc-restricted-protocol`: a call to a restricted group must carry
 * `triton-grpc-protocol-<key>: <value>` in its metadata, or it ends UNAVAILABLE with Triton's wording. It is
 * refused on its metadata alone: grpc-js reads a call's message only once every interceptor has passed its
 * metadata on, so a refused call's message is never buffered or decoded.
 *
 * @example
 * new Server({ interceptors: [restrictedApiInterceptor(parseRestrictedApis('model-repository:x-key=s'))] });
 */
export function restrictedApiInterceptor(restrictions: RestrictedApis): ServerInterceptor {
  return (method, call) => {
    const groups = grpcApiGroups(method.path);
    if (groups.length === 0 || !groups.some((g) => restrictions.has(g))) return new ServerInterceptingCall(call);
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const unmet = unmetRestriction(restrictions, groups, (key) => metadataValue(metadata, key));
        if (!unmet) {
          next(metadata);
          return;
        }
        call.sendStatus({ code: status.UNAVAILABLE, details: grpcRestrictedMessage(unmet.header), metadata: null });
      })
      .build();
    const responder = new ResponderBuilder().withStart((next) => next(listener)).build();
    return new ServerInterceptingCall(call, responder);
  };
}
