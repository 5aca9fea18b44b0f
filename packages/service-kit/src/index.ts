export * from './env-config.ts';
export * from './env-schema.ts';
export * from './http/access-log.ts';
export * from './http/api-reference.ts';
export * from './http/read-body.ts';
export * from './logger.ts';
export * from './shutdown.ts';
export * from './tracing/start-tracing.ts';
