export { freePort } from '@nvcf/service-kit';
export * from './cutting-proxy.ts';
export * from './openapi-validator.ts';
export * from './redis-cluster.ts';
export * from './redis-server.ts';
export * from './restartable-redis.ts';
export * from './server-runtime.ts';
export * from './zip-fixture.ts';
