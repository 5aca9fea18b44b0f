export * from './free-port.ts';
export * from './redis-server.ts';
