export {
  type GatewayGrpcServer,
  type GatewayGrpcServerOptions,
  startGatewayGrpcServer,
} from './gateway-grpc-server.ts';
export {
  createGatewayGrpcService,
  type GatewayGrpcDeps,
  type GatewayGrpcServiceOptions,
} from './gateway-grpc-service.ts';
