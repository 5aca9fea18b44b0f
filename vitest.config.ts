import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'apps/**/src/**/*.test.ts',
      'packages/**/src/**/*.test.ts',
      'bench/src/**/*.test.ts',
      'tests/*/src/**/*.test.ts',
      'scripts/*.test.ts',
    ],
    // Integration tests start redis-server, ONNX sessions and sockets: give them room on 2 cores.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
