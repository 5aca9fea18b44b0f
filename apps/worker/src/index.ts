export * from './config.ts';
export * from './functions/model-functions.ts';
export * from './worker-runtime.ts';
