import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@nvcf/testing';
import { modelFunctionId } from '@nvcf/worker';
import { createGatewayGrpcClient, type GatewayGrpcClient } from './gateway-grpc-client.ts';
import { createHttpClient, type HttpClient } from './http-client.ts';
import type { Call } from './load-driver.ts';
import { type NodeChild, spawnNode } from './node-child.ts';
import type { Payload } from './payloads.ts';
import { waitForFunctions } from './wait-for-functions.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

export interface ProductStackOptions {
  redisUrl: string;
  keyPrefix: string;
  modelRepository: string;
  /** Models that must be ACTIVE before the stack counts as ready. */
  models: string[];
  logLevel: string;
  workerConcurrency: number;
  /** Keep-alive connections the client may open: at least the highest concurrency driven. */
  maxSockets: number;
  /** The gRPC client's per-call deadline, as pexec's NVCF-POLL-SECONDS. */
  pollSeconds: number;
}

/** The product as deployed: a gateway process and one worker process sharing one Redis. */
export interface ProductStack {
  url: string;
  /** host:port of the gateway's gRPC port (inference.GRPCInferenceService, routed by `function-id`). */
  grpcAddress: string;
  gateway: NodeChild;
  worker: NodeChild;
  client: HttpClient;
  /** ModelInfer through the gateway's gRPC port with the same key; its channels open on `open()`. */
  grpc: GatewayGrpcClient;
  /** The bootstrap admin key the gateway was started with (every scope). */
  adminKey: string;
  close(): Promise<void>;
}

export async function startProductStack(opts: ProductStackOptions): Promise<ProductStack> {
  const shared = {
    REDIS_URL: opts.redisUrl,
    NVCF_KEY_PREFIX: opts.keyPrefix,
    LOG_LEVEL: opts.logLevel,
  };
  const [port, grpcPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${port}`;
  const grpcAddress = `127.0.0.1:${grpcPort}`;
  // Every gateway route but /health wants a credential: the gateway creates this key with every scope at start.
  const adminKey = `nvapi-bench-${randomBytes(24).toString('hex')}`;
  const gateway = spawnNode(
    'gateway',
    resolve(repoRoot, 'apps/gateway/src/main.ts'),
    {
      ...shared,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      GATEWAY_GRPC_PORT: String(grpcPort),
      GATEWAY_METRICS_PORT: '-1',
      NVCF_BOOTSTRAP_ADMIN_KEY: adminKey,
      // The benchmark measures the path, not the per-credential budgets of production.
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_OPEN_REQUESTS_PER_CREDENTIAL: '0',
    },
    join(tmpdir(), `nvcf-bench-gateway-${port}.log`),
  );
  const worker = spawnNode(
    'worker',
    resolve(repoRoot, 'apps/worker/src/main.ts'),
    {
      ...shared,
      MODEL_REPOSITORY: opts.modelRepository,
      WORKER_ID: 'bench-worker',
      ORT_EXECUTION_PROVIDERS: 'cpu',
      ORT_INTRA_OP_THREADS: '1',
      ORT_INTER_OP_THREADS: '1',
      WORKER_CONCURRENCY: String(opts.workerConcurrency),
      KSERVE_HTTP_PORT: '0',
      KSERVE_GRPC_PORT: '0',
      METRICS_PORT: '0',
    },
    join(tmpdir(), `nvcf-bench-worker-${port}.log`),
  );
  const client = createHttpClient(url, opts.maxSockets, { authorization: `Bearer ${adminKey}` });
  const grpc = createGatewayGrpcClient({ address: grpcAddress, apiKey: adminKey, deadlineSeconds: opts.pollSeconds });
  const close = async () => {
    grpc.close();
    client.close();
    await Promise.all([gateway.stop(), worker.stop()]);
  };
  try {
    const ready = waitUntilActive(client, opts.models.map(modelFunctionId), 60_000);
    await Promise.race([ready, gateway.died, worker.died]);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, grpcAddress, gateway, worker, client, grpc, adminKey, close };
}

/** Waits until every function is ACTIVE (its worker loaded it and heartbeats). */
function waitUntilActive(client: HttpClient, functionIds: string[], timeoutMs: number): Promise<void> {
  return waitForFunctions(
    client,
    (functions) => {
      const states = functionIds.map((id) => functions.find((f) => f.id === id)?.status ?? 'MISSING');
      return states.every((s) => s === 'ACTIVE') ? undefined : `function states ${states.join(', ')}`;
    },
    { timeoutMs, what: 'product stack' },
  );
}

/** (b) One pexec through gateway, Redis and worker; anything but a 200 within the poll window is an error. */
export function pexecCall(client: HttpClient, payload: Payload, pollSeconds: number): Call {
  const path = `/v2/nvcf/pexec/functions/${modelFunctionId(payload.model)}`;
  const headers = { 'content-type': 'application/json', 'nvcf-poll-seconds': String(pollSeconds) };
  return async () => {
    const res = await client.request('POST', path, payload.json, headers);
    if (res.status !== 200) throw new Error(`HTTP ${res.status}${problemTitle(res.body)}`);
  };
}

/** Checks once, outside the timing, that a pexec answers a KServe V2 response with the expected outputs. */
/** Checks one pexec answer; resolves to its body's size (what a worker hands the gateway through Redis). */
export async function checkPexecAnswer(client: HttpClient, payload: Payload, pollSeconds: number): Promise<number> {
  const path = `/v2/nvcf/pexec/functions/${modelFunctionId(payload.model)}`;
  const headers = { 'content-type': 'application/json', 'nvcf-poll-seconds': String(pollSeconds) };
  const res = await client.request('POST', path, payload.json, headers);
  if (res.status !== 200) throw new Error(`pexec ${payload.model}: HTTP ${res.status} ${res.body.toString()}`);
  const { outputs } = JSON.parse(res.body.toString()) as { outputs: { name: string }[] };
  const names = outputs.map((o) => o.name).sort();
  if (names.join() !== [...payload.outputs].sort().join()) {
    throw new Error(`pexec ${payload.model}: unexpected outputs ${names.join(', ')}`);
  }
  return res.body.byteLength;
}

function problemTitle(body: Buffer): string {
  try {
    const { title } = JSON.parse(body.toString()) as { title?: string };
    return title ? ` ${title}` : '';
  } catch {
    return '';
  }
}
