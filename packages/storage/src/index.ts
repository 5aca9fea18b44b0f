export * from './function-models.ts';
export * from './local-dir-store.ts';
export * from './model-archive-extract.ts';
export * from './object-store.ts';
export * from './open-object-store.ts';
export * from './s3-store.ts';
export * from './signed-url.ts';
