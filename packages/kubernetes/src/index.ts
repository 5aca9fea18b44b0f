export * from './manifest-models.ts';
export * from './names.ts';
export * from './worker-deployment.ts';
export * from './worker-pool.ts';
