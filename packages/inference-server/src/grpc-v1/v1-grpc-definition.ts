import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { loadV1Root, V1_PACKAGE } from '../triton-v1/v1-protos.ts';

export const V1_GRPC_SERVICE = `${V1_PACKAGE}.GRPCService`;

let cached: ServiceDefinition | undefined;

const serializer = (type: protobuf.Type) => (value: object) =>
  Buffer.from(type.encode(type.fromObject(value as Record<string, unknown>)).finish());
const deserializer = (type: protobuf.Type) => (bytes: Buffer) => type.decode(bytes);

/**
 * `nvidia.inferenceserver.GRPCService` (proto/trtis/grpc_service.proto) as a grpc-js service definition whose
 * codecs are the protobufjs types the HTTP surface uses, so both read and write v1 messages alike. Messages are
 * written from plain objects (`fromObject`) and read as protobufjs messages; v1-grpc-service.ts turns their
 * v1 parts into the compact form (`compactFromDecoded`). Servers and clients (tests) share it.
 *
 * @example
 * server.addService(tritonV1GrpcDefinition(), createTritonV1GrpcService(core));
 * const Client = makeGenericClientConstructor(tritonV1GrpcDefinition(), 'GRPCService');
 */
export function tritonV1GrpcDefinition(): ServiceDefinition {
  if (!cached) {
    const service = loadV1Root().lookupService(V1_GRPC_SERVICE);
    const definition: Record<string, MethodDefinition<object, object>> = {};
    for (const method of service.methodsArray) {
      method.resolve();
      const request = method.resolvedRequestType as protobuf.Type;
      const response = method.resolvedResponseType as protobuf.Type;
      definition[method.name] = {
        path: `/${V1_GRPC_SERVICE}/${method.name}`,
        requestStream: method.requestStream === true,
        responseStream: method.responseStream === true,
        requestSerialize: serializer(request),
        requestDeserialize: deserializer(request),
        responseSerialize: serializer(response),
        responseDeserialize: deserializer(response),
        originalName: method.name,
      };
    }
    cached = definition;
  }
  return cached;
}
