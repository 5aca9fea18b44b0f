export * from './env-config.ts';
export * from './env-schema.ts';
export * from './logger.ts';
export * from './shutdown.ts';
