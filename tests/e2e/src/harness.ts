import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createApiKeyStore, createFunctionRegistry, type NewApiKey } from '@nvcf/control-store';
import { type GatewayConfig, GatewayEnv, type RunningGateway, startGateway, toGatewayConfig } from '@nvcf/gateway';
import { generateExampleRepository } from '@nvcf/models';
import { NVCF_SCOPES } from '@nvcf/protocol';
import { createKeys, createRedis, type RedisClient } from '@nvcf/queue';
import { createLogger } from '@nvcf/service-kit';
import { type RedisHandle, startRedis, startRedisCluster } from '@nvcf/testing';
import {
  modelFunctionId,
  modelVersionId,
  type RunningWorker,
  startWorker,
  toWorkerConfig,
  WorkerEnv,
} from '@nvcf/worker';
import { writeHeldModel } from './held-model.ts';

const repoRoot = resolve(import.meta.dirname, '../../..');
const quiet = createLogger({ name: 'test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export interface ChildWorker {
  child: ChildProcess;
  workerId: string;
  exited: Promise<number | null>;
}

/** A gateway in its own process: a test can see it exit, count its open files and read its log. */
export interface ChildGateway {
  child: ChildProcess;
  url: string;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string | null>;
  /** Every JSON log line it has written so far. */
  logs(): Record<string, unknown>[];
}

/**
 * Real Redis (a private redis-server), real ONNX models in a temp repository, real gateways and workers
 * on loopback ports. One harness per test file; a unique key prefix per harness.
 */
export interface Harness {
  redisUrl: string;
  redis: RedisClient;
  keyPrefix: string;
  modelRepository: string;
  /** Environment shared by every gateway and worker of this harness (fast failure detection). */
  env: Record<string, string>;
  gateway(overrides?: Record<string, string>): Promise<RunningGateway>;
  worker(overrides?: Record<string, string>): Promise<RunningWorker>;
  /** A worker in its own process, for SIGKILL/SIGTERM tests; resolves once it heartbeats. */
  spawnWorker(overrides?: Record<string, string>, opts?: { execArgv?: string[] }): Promise<ChildWorker>;
  /** `apps/gateway/src/main.ts` in its own process; resolves once it listens. */
  spawnGateway(overrides?: Record<string, string>): Promise<ChildGateway>;
  close(): Promise<void>;
}

export const fnId = modelFunctionId;

/** Every harness gateway and worker encrypts function secrets with this key (NVCF_SECRETS_KEY). */
export const SECRETS_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');

/** Every harness gateway starts with this key holding every scope (NVCF_BOOTSTRAP_ADMIN_KEY). */
export const ADMIN_KEY = `nvapi-test-${crypto.randomUUID()}`;
export const adminAuth = { authorization: `Bearer ${ADMIN_KEY}` };

/**
 * A second account's key, minted by the operator (the bootstrap admin): by default that account's own admin, every
 * NVCF scope plus `manage_keys`. The attacker of the hostile-tenant tests.
 */
export async function accountKey(
  gatewayUrl: string,
  ncaId: string,
  opts: { name?: string; scopes?: readonly string[] } = {},
): Promise<string> {
  const res = await gfetch(`${gatewayUrl}/v2/nvcf/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: opts.name ?? `${ncaId}-admin`,
      ncaId,
      scopes: opts.scopes ?? [...NVCF_SCOPES, 'manage_keys'],
    }),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`minting a key for ${ncaId}: ${res.status} ${text}`);
  return (JSON.parse(text) as { value: string }).value;
}

/** fetch with the admin credential added: the gateway's every route but /health needs one. */
export function gfetch(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, headers: { ...adminAuth, ...(init.headers as Record<string, string> | undefined) } });
}
export const verId = (model: string) => modelVersionId(model, '1');

/**
 * Stores an API key as given, past the gateway's checks on a new key: a key an older gateway accepted (a name it
 * would now refuse, say). Resolves to its secret.
 */
export async function storeApiKey(h: Pick<Harness, 'redis' | 'keyPrefix'>, input: NewApiKey): Promise<string> {
  return (await createApiKeyStore(h.redis, createKeys(h.keyPrefix)).create(input)).key;
}

/**
 * A private redis-server, or with `NVCF_TEST_REDIS=cluster` a 3-primary Redis Cluster with a replica each: the
 * cluster-*.int.test.ts files run other test files unchanged on a cluster that way.
 */
function defaultRedisServer(): () => Promise<RedisHandle> {
  return process.env.NVCF_TEST_REDIS === 'cluster' ? () => startRedisCluster() : () => startRedis();
}

export async function createHarness(
  opts: {
    heldModel?: boolean;
    tritonExamples?: boolean;
    /** Where the harness's Redis comes from (a cluster, say); a private redis-server by default. */
    redisServer?: () => Promise<RedisHandle>;
  } = {},
): Promise<Harness> {
  const server: RedisHandle = await (opts.redisServer ?? defaultRedisServer())();
  const modelRepository = await mkdtemp(join(tmpdir(), 'nvcf-models-'));
  await generateExampleRepository(modelRepository, {
    includeGenerative: true,
    ...(opts.tritonExamples ? { includeTritonExamples: true } : {}),
  });
  if (opts.heldModel) await writeHeldModel(modelRepository);
  const keyPrefix = `t${Math.random().toString(36).slice(2, 10)}`;
  const assetDir = await mkdtemp(join(tmpdir(), 'nvcf-assets-'));
  const redis = createRedis(server.url);
  const env: Record<string, string> = {
    REDIS_URL: server.url,
    NVCF_KEY_PREFIX: keyPrefix,
    MODEL_REPOSITORY: modelRepository,
    GATEWAY_PORT: '0',
    GATEWAY_GRPC_PORT: '0',
    GATEWAY_METRICS_PORT: '0',
    ASSET_STORE_DIR: assetDir,
    GATEWAY_HOST: '127.0.0.1',
    WORKER_LOCK_DURATION_MS: '2000',
    WORKER_STALLED_INTERVAL_MS: '500',
    HEARTBEAT_INTERVAL_MS: '250',
    ORT_EXECUTION_PROVIDERS: 'cpu',
    KSERVE_HTTP_PORT: '0',
    KSERVE_GRPC_PORT: '0',
    METRICS_PORT: '0',
    NVCF_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    NVCF_SECRETS_KEY: SECRETS_KEY,
    WORKER_HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  };
  const gateways: RunningGateway[] = [];
  const workers: RunningWorker[] = [];
  const children: { child: ChildProcess; exited: Promise<unknown> }[] = [];
  let n = 0;

  const gatewayConfig = (overrides: Record<string, string>): GatewayConfig =>
    toGatewayConfig(GatewayEnv.parse({ ...env, ...overrides }));

  return {
    redisUrl: server.url,
    redis,
    keyPrefix,
    modelRepository,
    env,
    async gateway(overrides = {}) {
      const g = await startGateway(gatewayConfig(overrides), quiet);
      gateways.push(g);
      return g;
    },
    async worker(overrides = {}) {
      const config = toWorkerConfig(WorkerEnv.parse({ ...env, WORKER_ID: `w${++n}`, ...overrides }));
      const w = await startWorker(config, quiet);
      workers.push(w);
      return w;
    },
    async spawnWorker(overrides = {}, opts = {}) {
      const workerId = `child${++n}`;
      const child = spawn(process.execPath, [...(opts.execArgv ?? []), join(repoRoot, 'apps/worker/src/main.ts')], {
        env: { ...process.env, ...env, WORKER_ID: workerId, ...overrides },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const cw = { child, workerId, exited };
      children.push(cw);
      const registry = createFunctionRegistry(redis, createKeys(keyPrefix));
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const [ids] = await registry.liveWorkers([verId('simple')]);
        if (ids?.includes(workerId)) return cw;
        if (child.exitCode !== null) throw new Error(`worker exited early with ${child.exitCode}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('spawned worker never became ready');
    },
    async spawnGateway(overrides = {}) {
      const child = spawn(process.execPath, [join(repoRoot, 'apps/gateway/src/main.ts')], {
        env: { ...process.env, ...env, LOG_LEVEL: 'info', ...overrides },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<number | string | null>((r) => child.once('exit', (code, sig) => r(code ?? sig)));
      children.push({ child, exited });
      const lines: Record<string, unknown>[] = [];
      let rest = '';
      let listening!: (port: number) => void;
      const port = new Promise<number>((r) => {
        listening = r;
      });
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          try {
            const entry = JSON.parse(line) as Record<string, unknown>;
            lines.push(entry);
            if (entry.msg === 'gateway listening') listening(Number(entry.port));
          } catch {
            // not a log line
          }
        }
      });
      const started = await Promise.race([
        port,
        exited.then((code) => {
          throw new Error(`gateway exited early with ${code}`);
        }),
        new Promise<never>((_, rej) => setTimeout(() => rej(new Error('gateway never listened')), 30_000)),
      ]);
      return { child, url: `http://127.0.0.1:${started}`, exited, logs: () => lines };
    },
    async close() {
      for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
      await Promise.all(children.map((c) => c.exited));
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(gateways.map((g) => g.close()));
      redis.disconnect();
      await server.close();
      await rm(modelRepository, { recursive: true, force: true });
      await rm(assetDir, { recursive: true, force: true });
    },
  };
}

/** INPUT0 = 0..15, INPUT1 = ones: Triton's simple client request. */
export function simpleRequest(extra: object = {}): object {
  return {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
    ],
    ...extra,
  };
}

export async function pexec(
  baseUrl: string,
  path: string,
  body: object | string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    // Tests look at the gateway's own answer (a 302 included), not where it points.
    redirect: 'manual',
    headers: { 'content-type': 'application/json', ...adminAuth, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
