export * from './account-access.ts';
export * from './api-key-store.ts';
export * from './asset-store.ts';
export * from './function-authorization-store.ts';
export * from './function-registry.ts';
export * from './function-secret-store.ts';
export * from './rate-limiter.ts';
export * from './secret-cipher.ts';
