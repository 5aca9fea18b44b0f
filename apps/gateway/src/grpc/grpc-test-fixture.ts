/**
 * Test helper (only *.int.test.ts import it): the gateway's objects built over a harness's Redis the way
 * server.ts builds them, the gRPC port over them, and clients generated from the project's .proto files.
 */
import { type Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { loadKserveClients, MAX_MESSAGE_BYTES } from '@nvcf/kserve-grpc';
import { SCOPES } from '@nvcf/protocol';
import {
  createApiKeyStore,
  createCompletionWaiter,
  createFunctionRegistry,
  createInvocationProducer,
  createKeys,
  createRateLimiter,
  createRedis,
  createRequestStore,
} from '@nvcf/queue';
import { createLogger } from '@nvcf/service-kit';
import { v4 as uuidv4 } from 'uuid';
import { createAuthenticator } from '../auth/authenticator.ts';
import { GatewayEnv, toGatewayConfig } from '../config.ts';
import type { Harness } from '../e2e/harness.ts';
import { ADMIN_KEY } from '../e2e/harness.ts';
import { createFunctionResolver } from '../invocation/function-resolver.ts';
import { createInvocationService } from '../invocation/invocation-service.ts';
import { createQueueGuard } from '../invocation/queue-guard.ts';
import {
  type GatewayGrpcServer,
  type GatewayGrpcServerOptions,
  startGatewayGrpcServer,
} from './gateway-grpc-server.ts';
import type { GatewayGrpcDeps } from './gateway-grpc-service.ts';

type Callback = (err: ServiceError | null, res: unknown) => void;
type UnaryMethod = (
  req: unknown,
  metadata: Metadata,
  options: { deadline?: number },
  cb: Callback,
) => { on(event: 'metadata', listener: (m: Metadata) => void): unknown };

export interface CallOptions {
  metadata?: Record<string, string>;
  deadlineMs?: number;
}

/** A call's answer with the initial metadata the server sent (`nvcf-reqid`). */
export interface Answer<T> {
  response: T;
  metadata: Metadata;
}

export interface GrpcFailure {
  error: ServiceError;
  /** Initial metadata, when the server sent any before the status. */
  metadata: Metadata | undefined;
}

export interface GrpcClient {
  inference: Client;
  health: Client;
  call<T = Record<string, unknown>>(method: string, request?: object, opts?: CallOptions): Promise<Answer<T>>;
  /** Calls an RPC that must fail; resolves with its ServiceError. */
  fail(method: string, request?: object, opts?: CallOptions): Promise<GrpcFailure>;
  check(service: string): Promise<{ status: string }>;
  close(): void;
}

export interface GatewayGrpcFixture {
  deps: GatewayGrpcDeps;
  server: GatewayGrpcServer;
  address: string;
  /** One channel for the whole file, as the seed's client keeps one. */
  client: GrpcClient;
  /** Another gRPC port over the same deps (other options). */
  startServer(opts?: Partial<GatewayGrpcServerOptions>): Promise<{ server: GatewayGrpcServer; client: GrpcClient }>;
  close(): Promise<void>;
}

export const CLIENT_OPTIONS = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
};

export async function startGatewayGrpcFixture(
  h: Harness,
  env: Record<string, string> = {},
  opts: Partial<GatewayGrpcServerOptions> = {},
): Promise<GatewayGrpcFixture> {
  const config = toGatewayConfig(GatewayEnv.parse({ ...h.env, ...env }));
  const logger = createLogger({ name: 'gateway-grpc-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const keys = createKeys(config.keyPrefix);
  const redis = createRedis(config.redisUrl, { name: 'gateway' });
  const subscriber = createRedis(config.redisUrl, { blocking: true, name: 'gateway-sub' });
  const completions = createCompletionWaiter(subscriber, keys, uuidv4());
  await completions.start();
  const registry = createFunctionRegistry(redis, keys);
  const store = createRequestStore(redis, keys, { ttlSeconds: config.requestTtlSeconds });
  const producer = createInvocationProducer(redis, keys, {
    keepFinishedSeconds: config.requestTtlSeconds,
    attempts: config.jobAttempts,
  });
  const functions = createFunctionResolver(registry, { cacheMs: config.functionCacheMs });
  const invocations = createInvocationService({
    functions,
    queueGuard: createQueueGuard(producer, { maxDepth: config.maxQueueDepth, cacheMs: 250 }),
    store,
    producer,
    completions,
    maxInlineResultBytes: config.maxInlineResultBytes,
    onBackgroundError: (err, requestId) => logger.warn({ err, requestId }, 'marking an inline result delivered failed'),
  });
  const keyStore = createApiKeyStore(redis, keys);
  await keyStore.create({ name: 'bootstrap-admin', scopes: [...SCOPES], secret: ADMIN_KEY });
  const auth = createAuthenticator({ keyStore, cacheMs: config.authCacheMs });
  const limiter = createRateLimiter(redis, keys, { limit: config.rateLimitPerMinute, windowSeconds: 60 });
  const deps: GatewayGrpcDeps = { auth, functions, invocations, limiter, logger };

  const servers: GatewayGrpcServer[] = [];
  const clients: GrpcClient[] = [];
  const startServer = async (more: Partial<GatewayGrpcServerOptions> = {}) => {
    const server = await startGatewayGrpcServer(deps, { host: '127.0.0.1', port: 0, ...opts, ...more });
    servers.push(server);
    const client = grpcClient(`127.0.0.1:${server.port}`);
    clients.push(client);
    return { server, client };
  };
  const { server, client } = await startServer();
  return {
    deps,
    server,
    address: `127.0.0.1:${server.port}`,
    client,
    startServer,
    async close() {
      for (const c of clients) c.close();
      await Promise.all(servers.map((s) => s.close()));
      await completions.close();
      await producer.close();
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}

export function grpcClient(address: string): GrpcClient {
  const { GRPCInferenceService, Health } = loadKserveClients();
  const inference = new GRPCInferenceService(address, credentials.createInsecure(), CLIENT_OPTIONS);
  const health = new Health(address, credentials.createInsecure(), CLIENT_OPTIONS);

  const invoke = <T>(client: Client, method: string, request: object, opts: CallOptions = {}) =>
    new Promise<Answer<T>>((resolve, reject) => {
      const metadata = new Metadata();
      for (const [k, v] of Object.entries(opts.metadata ?? {})) metadata.set(k, v);
      const fn = (client as unknown as Record<string, UnaryMethod>)[method];
      if (!fn) throw new Error(`no method ${method}`);
      const options = opts.deadlineMs === undefined ? {} : { deadline: Date.now() + opts.deadlineMs };
      let initial: Metadata | undefined;
      const call = fn.call(client, request, metadata, options, (err, res) => {
        if (err) reject(Object.assign(err, { initialMetadata: initial }));
        else resolve({ response: res as T, metadata: initial ?? new Metadata() });
      });
      call.on('metadata', (m) => {
        initial = m;
      });
    });

  return {
    inference,
    health,
    call: (method, request = {}, opts) => invoke(inference, method, request, opts),
    async fail(method, request = {}, opts) {
      try {
        await invoke(inference, method, request, opts);
      } catch (err) {
        const error = err as ServiceError & { initialMetadata?: Metadata };
        return { error, metadata: error.initialMetadata };
      }
      throw new Error(`${method} succeeded but was expected to fail`);
    },
    check: async (service) => (await invoke<{ status: string }>(health, 'Check', { service })).response,
    close() {
      inference.close();
      health.close();
    },
  };
}

/** INT32 little-endian bytes, as numpy's tobytes() gives them. */
export function int32Bytes(values: number[]): Buffer {
  return Buffer.from(Int32Array.from(values).buffer);
}

export function int32sOf(raw: Uint8Array): number[] {
  return [...new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))];
}

/** BYTES elements from their 4-byte little-endian length prefixes. */
export function parseBytesElements(raw: Uint8Array): string[] {
  const buf = Buffer.from(raw);
  const out: string[] = [];
  for (let off = 0; off < buf.length; ) {
    const len = buf.readUInt32LE(off);
    out.push(buf.subarray(off + 4, off + 4 + len).toString());
    off += 4 + len;
  }
  return out;
}
