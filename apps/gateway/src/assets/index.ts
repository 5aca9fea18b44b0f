export * from './asset-references.ts';
export * from './asset-routes.ts';
export * from './asset-service.ts';
