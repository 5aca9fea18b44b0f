import { type RedisHandle, startRedis } from '@nvcf/testing';
import { afterAll, beforeAll } from 'vitest';
import { createRedis, type RedisClient } from './redis-connection.ts';

/** A test file's own Redis: its server and one client on it. */
export interface PrivateRedis {
  /** The client; read it inside a test or hook (the server starts in `beforeAll`). */
  readonly redis: RedisClient;
  readonly url: string;
}

/**
 * Test helper (*.int.test.ts only): registers the calling file's `beforeAll`, which starts a private `redis-server`
 * on a free port (never mock Redis; see packages/testing) and connects a client, and its `afterAll`, which closes
 * both. Tests keep their keys apart with a prefix of their own (`createKeys`).
 *
 * @example
 * const db = usePrivateRedis();
 * it('stores', async () => { await db.redis.set('k', 'v'); });
 */
export function usePrivateRedis(): PrivateRedis {
  let server: RedisHandle | undefined;
  let client: RedisClient | undefined;
  beforeAll(async () => {
    server = await startRedis();
    client = createRedis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('usePrivateRedis: read it inside a test or a hook');
    return value;
  };
  return {
    get redis() {
      return started(client);
    },
    get url() {
      return started(server).url;
    },
  };
}
