import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { freePort, type RestartableRedis, startRestartableRedis } from '@nvcf/testing';
import { type NodeChild, spawnNode } from '../node-child.ts';

const repoRoot = resolve(import.meta.dirname, '../../..');

export interface ChaosProcess {
  child: NodeChild;
  url: string;
}

/** Real processes: one restartable Redis, gateways and workers, the example models. */
export interface ChaosCluster {
  redis: RestartableRedis;
  keyPrefix: string;
  adminKey: string;
  gateways: ChaosProcess[];
  workers: NodeChild[];
  /** A gateway on `port` (a fixed one, so that it can come back where clients expect it). */
  startGateway(port?: number): Promise<ChaosProcess>;
  startWorker(): Promise<NodeChild>;
  /** Resident set size of a process (KiB), 0 when it is gone. */
  rssKiB(pid: number): Promise<number>;
  close(): Promise<void>;
}

export async function startChaosCluster(
  opts: { gateways?: number; workers?: number; env?: Record<string, string> } = {},
): Promise<ChaosCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'nvcf-chaos-'));
  const redisDir = join(dir, 'redis');
  const models = join(dir, 'models');
  await mkdir(redisDir, { recursive: true });
  await generateExampleRepository(models);
  const redis = await startRestartableRedis(redisDir);
  const keyPrefix = `chaos${randomBytes(3).toString('hex')}`;
  const adminKey = `nvapi-chaos-${randomBytes(24).toString('hex')}`;
  const shared = {
    REDIS_URL: redis.url,
    NVCF_KEY_PREFIX: keyPrefix,
    ASSET_STORE_DIR: join(dir, 'objects'),
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    LOG_LEVEL: 'info',
    ...opts.env,
  };
  const gateways: ChaosProcess[] = [];
  const workers: NodeChild[] = [];
  let n = 0;

  async function startGateway(fixedPort?: number): Promise<ChaosProcess> {
    const port = fixedPort ?? (await freePort());
    const child = spawnNode('gateway', resolve(repoRoot, 'apps/gateway/src/main.ts'), {
      ...shared,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      GATEWAY_GRPC_PORT: '-1',
      GATEWAY_METRICS_PORT: '-1',
      NVCF_BOOTSTRAP_ADMIN_KEY: adminKey,
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_OPEN_REQUESTS_PER_CREDENTIAL: '0',
      GATEWAY_SHUTDOWN_GRACE_MS: '2000',
    });
    await Promise.race([child.waitForLine(/"msg":"gateway listening"/, 30_000), child.died]);
    const g = { child, url: `http://127.0.0.1:${port}` };
    gateways.push(g);
    return g;
  }

  async function startWorker(): Promise<NodeChild> {
    const child = spawnNode('worker', resolve(repoRoot, 'apps/worker/src/main.ts'), {
      ...shared,
      MODEL_REPOSITORY: models,
      WORKER_ID: `chaos-w${++n}`,
      ORT_EXECUTION_PROVIDERS: 'cpu',
      ORT_INTRA_OP_THREADS: '1',
      ORT_INTER_OP_THREADS: '1',
      WORKER_CONCURRENCY: '8',
      // Fast failure detection: a killed worker's jobs are taken over within a few seconds.
      WORKER_LOCK_DURATION_MS: '3000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      HEARTBEAT_INTERVAL_MS: '500',
      KSERVE_HTTP_PORT: '-1',
      KSERVE_GRPC_PORT: '-1',
      METRICS_PORT: '-1',
      SHUTDOWN_TIMEOUT_MS: '10000',
    });
    await Promise.race([child.waitForLine(/"msg":"worker ready"/, 60_000), child.died]);
    workers.push(child);
    return child;
  }

  for (let i = 0; i < (opts.workers ?? 1); i++) await startWorker();
  for (let i = 0; i < (opts.gateways ?? 1); i++) await startGateway();

  return {
    redis,
    keyPrefix,
    adminKey,
    gateways,
    workers,
    startGateway,
    startWorker,
    async rssKiB(pid) {
      try {
        const status = await readFile(`/proc/${pid}/status`, 'utf8');
        return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      } catch {
        return 0;
      }
    },
    async close() {
      redis.resume();
      await Promise.all([...gateways.map((g) => g.child.stop(3000)), ...workers.map((w) => w.stop(3000))]);
      await redis.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
