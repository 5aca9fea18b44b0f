import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { freePort } from '@nvcf/service-kit';
import { Redis } from 'ioredis';

export interface RedisHandle {
  url: string;
  /** True when this handle started the server (and close() stops it). */
  owned: boolean;
  close(): Promise<void>;
}

export const REDIS_INSTALL_HINT =
  'No Redis available: set REDIS_URL, or install redis-server (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis).';

export function hasRedisServerBinary(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * A Redis for tests and the quick start: `REDIS_URL` when set, else a private `redis-server` on a free
 * loopback port (fast, isolated, parallel-safe). Persistence is off: these servers are throwaway.
 */
export async function startRedis(
  opts: {
    env?: NodeJS.ProcessEnv;
    persistDir?: string;
    /** More server arguments (`--maxmemory 8mb`): always a private server then, never `REDIS_URL`'s. */
    args?: readonly string[];
  } = {},
): Promise<RedisHandle> {
  const env = opts.env ?? process.env;
  if (env.REDIS_URL && !opts.args) return { url: env.REDIS_URL, owned: false, close: async () => {} };
  if (!hasRedisServerBinary()) throw new Error(REDIS_INSTALL_HINT);
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    try {
      return await spawnOn(port, opts.persistDir, opts.args ?? []);
    } catch (err) {
      lastError = err; // port taken between probe and bind: try another
    }
  }
  throw new Error(`could not start redis-server: ${String(lastError)}`);
}

async function spawnOn(port: number, persistDir: string | undefined, args: readonly string[]): Promise<RedisHandle> {
  const persistence = persistDir ? ['--dir', persistDir, '--appendonly', 'yes'] : ['--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...persistence, ...args], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  await waitForPing(url, child);
  return { url, owned: true, close: () => stop(child) };
}

/** Waits until the server `child` started answers PING on `url` (10 s at most; then it is killed). */
export async function waitForPing(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      client.disconnect();
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not answer PING within 10 s');
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
