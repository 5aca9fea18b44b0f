export * from './app.ts';
export * from './config.ts';
export { MESSAGE_FRAMING_ALLOWANCE_BYTES } from './grpc/gateway-grpc-server.ts';
export * from './server.ts';
