import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@nvcf/testing';
import { modelFunctionId } from '@nvcf/worker';
import { createHttpClient, type HttpClient } from './http-client.ts';
import { type NodeChild, spawnNode } from './node-child.ts';
import { waitForFunctions } from './wait-for-functions.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

export interface ScaleStackOptions {
  redisUrl: string;
  keyPrefix: string;
  modelRepository: string;
  /** Models every worker must serve (a live instance each) before the stack counts as ready. */
  models: string[];
  gateways: number;
  workers: number;
  logLevel: string;
  /** WORKER_CPU_INSTANCES of each worker: model instances (threads with a session) per model. */
  cpuInstances: number;
  /** WORKER_CONCURRENCY of each worker (0: the model's own capacity, the product default). */
  workerConcurrency: number;
  /** Keep-alive connections each gateway's client may open. */
  maxSockets: number;
  /** Gateway env over the benchmark's (which turns the per-credential rate limit and open-request cap off). */
  gatewayEnv?: Record<string, string>;
}

/** The product as a horizontally scaled deployment: `gateways` gateway and `workers` worker processes on one Redis. */
export interface ScaleStack {
  gateways: NodeChild[];
  workers: NodeChild[];
  /** One keep-alive client per gateway, each with the admin key. */
  clients: HttpClient[];
  /** Rejects when any child exits before `close()`. */
  died: Promise<never>;
  close(): Promise<void>;
}

export async function startScaleStack(opts: ScaleStackOptions): Promise<ScaleStack> {
  const shared = { REDIS_URL: opts.redisUrl, NVCF_KEY_PREFIX: opts.keyPrefix, LOG_LEVEL: opts.logLevel };
  // Every gateway creates the same bootstrap key at start; the key record is shared through Redis.
  const adminKey = `nvapi-bench-${randomBytes(24).toString('hex')}`;
  const gateways: NodeChild[] = [];
  const workers: NodeChild[] = [];
  const clients: HttpClient[] = [];
  const close = async () => {
    for (const c of clients) c.close();
    await Promise.all([...gateways, ...workers].map((c) => c.stop()));
  };
  try {
    for (let i = 0; i < opts.gateways; i++) {
      const port = await freePort();
      gateways.push(
        spawnNode(
          `gateway-${i + 1}`,
          resolve(repoRoot, 'apps/gateway/src/main.ts'),
          {
            ...shared,
            GATEWAY_HOST: '127.0.0.1',
            GATEWAY_PORT: String(port),
            GATEWAY_GRPC_PORT: '-1',
            GATEWAY_METRICS_PORT: '-1',
            NVCF_BOOTSTRAP_ADMIN_KEY: adminKey,
            // The figures are the path's, not production's per-credential budgets.
            RATE_LIMIT_PER_MINUTE: '0',
            MAX_OPEN_REQUESTS_PER_CREDENTIAL: '0',
            ...opts.gatewayEnv,
          },
          join(tmpdir(), `nvcf-bench-scale-gateway-${port}.log`),
        ),
      );
      clients.push(
        createHttpClient(`http://127.0.0.1:${port}`, opts.maxSockets, { authorization: `Bearer ${adminKey}` }),
      );
    }
    for (let i = 0; i < opts.workers; i++) {
      workers.push(
        spawnNode(
          `worker-${i + 1}`,
          resolve(repoRoot, 'apps/worker/src/main.ts'),
          {
            ...shared,
            MODEL_REPOSITORY: opts.modelRepository,
            WORKER_ID: `scale-worker-${i + 1}`,
            ORT_EXECUTION_PROVIDERS: 'cpu',
            ORT_INTRA_OP_THREADS: '1',
            ORT_INTER_OP_THREADS: '1',
            WORKER_CPU_INSTANCES: String(opts.cpuInstances),
            WORKER_CONCURRENCY: String(opts.workerConcurrency),
            // Only the queue is driven: no inference ports to bind (and collide on).
            KSERVE_HTTP_PORT: '-1',
            KSERVE_GRPC_PORT: '-1',
            METRICS_PORT: '-1',
          },
          join(tmpdir(), `nvcf-bench-scale-worker-${process.pid}-${i + 1}.log`),
        ),
      );
    }
    const died = Promise.race([...gateways, ...workers].map((c) => c.died));
    died.catch(() => {});
    const workerIds = workers.map((_, i) => `scale-worker-${i + 1}`);
    const ready = Promise.all(clients.map((c) => waitForInstances(c, opts.models.map(modelFunctionId), workerIds)));
    await Promise.race([ready, died]);
    return { gateways, workers, clients, died, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Waits until every function lists every worker among its active instances (each worker loaded the model and
 * heartbeats): a row must not start while a worker is still loading.
 */
function waitForInstances(
  client: HttpClient,
  functionIds: string[],
  workerIds: string[],
  timeoutMs = 120_000,
): Promise<void> {
  return waitForFunctions(
    client,
    (functions) => {
      const missing = functionIds.flatMap((id) => {
        const live = new Set(
          functions.filter((f) => f.id === id).flatMap((f) => (f.activeInstances ?? []).map((i) => i.instanceId)),
        );
        return workerIds.filter((w) => !live.has(w)).map((w) => `${w} on ${id}`);
      });
      return missing.length === 0 ? undefined : `not yet live: ${missing.join(', ')}`;
    },
    { timeoutMs, what: 'scale stack', intervalMs: 200 },
  );
}
