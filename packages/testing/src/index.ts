export * from './free-port.ts';
export * from './redis-server.ts';
export * from './zip-fixture.ts';
