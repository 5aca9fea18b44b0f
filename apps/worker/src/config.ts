import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRestrictedApis, type RestrictedApis } from '@nvcf/inference-server';
import {
  checkSecretsEnv,
  envBool,
  envInt,
  envString,
  loadEnvConfig,
  objectStoreConfig,
  objectStoreEnv,
  type SecretsKeys,
  secretsEnv,
  secretsKeysConfig,
  sharedEnv,
  type TracingOptions,
  tracingConfig,
  tracingEnv,
} from '@nvcf/service-kit';
import type { ObjectStoreConfig } from '@nvcf/storage';
import { z } from 'zod';
import { MODEL_CONTROL_MODES, type ModelControlMode } from './access/public-core.ts';
import type { SandboxKind, ServerUser } from './container/server-sandbox.ts';
import { parseServerUser, processModeProblem } from './container/server-user.ts';

const providerList = envString('cuda,cpu').transform((s) =>
  s
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean),
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Comma-separated function version ids; a typo is refused, not left to serve nothing without a word. */
const versionIdList = envString('').transform((text, ctx) => {
  const ids = text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const id of ids) {
    if (!UUID.test(id)) ctx.addIssue({ code: 'custom', message: `'${id}' is not a function version id (a UUID)` });
  }
  return ids;
});

const restrictedApis = envString('').transform((text, ctx): RestrictedApis => {
  try {
    return parseRestrictedApis(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

const serverUser = envString('').transform((text, ctx): ServerUser | undefined => {
  if (!text) return undefined;
  try {
    return parseServerUser(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

export const SANDBOX_SETTINGS = ['auto', 'bwrap', 'none'] as const;

export const WorkerEnv = z
  .object({
    ...sharedEnv,
    ...tracingEnv('nvcf-worker'),
    MODEL_REPOSITORY: envString('./model-repository'),
    MODEL_ARCHIVE_MAX_BYTES: envInt(2 * 1024 * 1024 * 1024, 1),
    MODEL_ARCHIVE_MAX_RATIO: envInt(200, 1),
    ...objectStoreEnv,
    MAX_DIRECT_RESULT_BYTES: envInt(5 * 1024 * 1024, 1),
    STREAM_CHUNK_ROWS: envInt(16, 0),
    RESULT_OBJECT_TTL_SECONDS: envInt(24 * 60 * 60, 1),
    WORKER_ID: envString(''),
    WORKER_POOL: envString('default').pipe(z.string().min(1)),
    WORKER_GPU: envString('CPU').pipe(z.string().min(1)),
    WORKER_INSTANCE_TYPE: envString(''),
    WORKER_CONCURRENCY: envInt(0, 0, 1024),
    WORKER_FUNCTION_VERSIONS: versionIdList,
    ORT_EXECUTION_PROVIDERS: providerList,
    ORT_INTRA_OP_THREADS: envInt(1, 0, 256),
    ORT_INTER_OP_THREADS: envInt(1, 0, 256),
    ORT_INLINE_MAX_US: envInt(250, 0, 100_000),
    WORKER_CPU_INSTANCES: envInt(0, 0, 256),
    MAX_TENSOR_ELEMENTS: envInt(1 << 26, 1),
    MAX_HTTP_BODY_BYTES: envInt(64 * 1024 * 1024, 1),
    WORKER_LOCK_DURATION_MS: envInt(30_000, 500),
    WORKER_STALLED_INTERVAL_MS: envInt(30_000, 500),
    WORKER_MAX_STALLED_COUNT: envInt(2, 0, 100),
    HEARTBEAT_INTERVAL_MS: envInt(2_000, 100),
    DEPLOYMENT_SYNC_MS: envInt(5_000, 100),
    SHUTDOWN_TIMEOUT_MS: envInt(30_000, 0),
    NVCF_NCA_ID: envString('self-hosted'),
    WORKER_HOST: envString('0.0.0.0'),
    KSERVE_HTTP_PORT: envInt(8000, -1, 65535),
    KSERVE_GRPC_PORT: envInt(8001, -1, 65535),
    METRICS_PORT: envInt(8002, -1, 65535),
    TRITON_V1_STRICT_READINESS: envBool(true),
    TRITON_V1_SERVER_ID: envString('inference:0'),
    WORKER_MODEL_CONTROL_MODE: z.preprocess(
      (v) => (v === '' || v === undefined ? 'none' : v),
      z.enum(MODEL_CONTROL_MODES),
    ),
    WORKER_RESTRICTED_API: restrictedApis,
    WORKER_EXPOSE_FUNCTION_MODELS: envBool(false),
    WORKER_ALLOW_CLIENT_SHM: envBool(true),
    WORKER_GRPC_MAX_RECEIVE_BYTES: envInt(64 * 1024 * 1024, 1024, 2 ** 31 - 1),
    WORKER_CONTAINER_URL: envString('').pipe(z.union([z.literal(''), z.url({ protocol: /^http$/ })])),
    WORKER_CONTAINER_PROCESSES: envBool(false),
    WORKER_CONTAINER_USER: serverUser,
    WORKER_CONTAINER_SANDBOX: z.preprocess((v) => (v === '' || v === undefined ? 'auto' : v), z.enum(SANDBOX_SETTINGS)),
    WORKER_CONTAINER_WORK_DIR: envString(''),
    WORKER_CONTAINER_TIMEOUT_MS: envInt(10 * 60 * 1000, 1),
    WORKER_SECRETS_DIR: envString(''),
    ...secretsEnv,
  })
  .superRefine((env, ctx) => {
    checkSecretsEnv(env, ctx);
    const processMode = processModeProblem(
      env.WORKER_CONTAINER_PROCESSES && !env.WORKER_CONTAINER_URL,
      env.WORKER_CONTAINER_USER,
      process.getuid?.(),
    );
    if (processMode) ctx.addIssue({ code: 'custom', path: ['WORKER_CONTAINER_USER'], message: processMode });
    // NVCF mounts one function's secrets at /var/secrets/secrets.json in its container: a sidecar's directory is
    // that one version's, so the file is never ambiguous.
    if (env.WORKER_SECRETS_DIR && (!env.WORKER_CONTAINER_URL || env.WORKER_FUNCTION_VERSIONS.length !== 1)) {
      ctx.addIssue({
        code: 'custom',
        path: ['WORKER_SECRETS_DIR'],
        message:
          'is for sidecar mode: it needs WORKER_CONTAINER_URL and exactly one WORKER_FUNCTION_VERSIONS entry, the version whose secrets.json it holds',
      });
    }
    // A sidecar serves the versions deployed to its server; without the list it would send other functions'
    // requests to a server whose health check happens to pass.
    if (env.WORKER_CONTAINER_URL && env.WORKER_FUNCTION_VERSIONS.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['WORKER_FUNCTION_VERSIONS'],
        message: 'WORKER_CONTAINER_URL needs WORKER_FUNCTION_VERSIONS: the function versions deployed to that server',
      });
    }
  });
export type WorkerEnv = z.infer<typeof WorkerEnv>;

export interface WorkerConfig {
  redisUrl: string;
  /** Non-blocking Redis commands fail after this long (the job is retried, never hangs). */
  redisCommandTimeoutMs: number;
  keyPrefix: string;
  requestTtlSeconds: number;
  logLevel: string;
  /** OpenTelemetry traces (off when its endpoint is empty). */
  tracing: TracingOptions;
  modelRepository: string;
  /** Bounds on unpacking a function's zipped model (the gateway's settings: what it accepted, this unpacks). */
  modelArchiveMaxBytes: number;
  modelArchiveMaxRatio: number;
  /** Assets, function models and large results (a local directory or S3-compatible storage). */
  objectStore: ObjectStoreConfig;
  /** Larger results are stored and answered with a 302 (NVCF: 5 MiB). */
  maxDirectResultBytes: number;
  /** A streaming request's batch is answered this many rows at a time (0: whole). */
  streamChunkRows: number;
  resultObjectTtlSeconds: number;
  workerId: string;
  /** The machine it reports with each heartbeat: `GET /v2/nvcf/clusterGroups` lists one group per pool. */
  machine: { pool: string; gpu: string; instanceType: string };
  /** Jobs active at once per function version; 0 follows the model (functions/model-capacity.ts). */
  concurrency: number;
  /**
   * The function versions this worker serves (a worker pool per version, scaled on its own queue); empty: every
   * deployed version whose model it can load.
   */
  functionVersionIds: string[];
  executionProviders: string[];
  /** Instances (threads with a session) of a model whose config names no count; 0: one per core. */
  cpuInstances: number;
  intraOpThreads: number;
  interOpThreads: number;
  /** Runs of a CPU model measured under this many µs execute on the event loop instead of a model thread; 0: never. */
  inlineMaxMicros: number;
  maxTensorElements: number;
  maxHttpBodyBytes: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
  heartbeatIntervalMs: number;
  /** Fallback re-sync period with the registry's deployments (changes are also pushed by pub/sub). */
  deploymentSyncMs: number;
  shutdownTimeoutMs: number;
  ncaId: string;
  host: string;
  /** -1 disables a surface; 0 picks a free port. */
  httpPort: number;
  grpcPort: number;
  metricsPort: number;
  /** Triton v1 `--strict-readiness`: ready only while every model loaded at start is loaded. */
  v1StrictReadiness: boolean;
  v1ServerId: string;
  /** Triton's `--model-control-mode`: `none` refuses load/unload on every surface; `explicit` allows them. */
  modelControl: ModelControlMode;
  /** Triton's `--http-restricted-api` / `--grpc-restricted-protocol`: API groups that need a header. */
  restrictedApis: RestrictedApis;
  /** Serve NVCF function models (`fv-…`) on the HTTP/gRPC surfaces too; queue jobs run them regardless. */
  exposeFunctionModels: boolean;
  /** Triton's `--allow-client-shm`: clients may register system shared memory regions. */
  allowClientShm: boolean;
  /** Largest gRPC message the worker accepts. */
  grpcMaxReceiveBytes: number;
  /** Container functions (docs in the README's container functions section). */
  container: {
    /** Sidecar mode: the inference server beside this worker ('' : none). */
    url: string;
    /** Process mode: the worker runs each deployed container version's `containerArgs` as a child process. */
    processes: boolean;
    /** Process mode: the servers' user (absent: the worker's own, which must not be root). */
    user: ServerUser | undefined;
    /** Process mode: bubblewrap where it works (`auto`), required (`bwrap`) or never (`none`). */
    sandbox: 'auto' | SandboxKind;
    /** Holds each request's asset and large-output directories (shared with a sidecar at the same path). */
    workDir: string;
    /** A request to the inference server (its whole answer, a 202's polls included) fails after this long. */
    timeoutMs: number;
    /** Sidecar mode: where the served version's `secrets.json` is written for the server to read ('' : nowhere). */
    secretsDir: string;
  };
  /** The key the function secrets were encrypted with (none: versions with secrets are not served). */
  secrets: SecretsKeys;
}

export function toWorkerConfig(env: WorkerEnv): WorkerConfig {
  return {
    redisUrl: env.REDIS_URL,
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    keyPrefix: env.NVCF_KEY_PREFIX,
    requestTtlSeconds: env.REQUEST_TTL_SECONDS,
    logLevel: env.LOG_LEVEL,
    tracing: tracingConfig(env),
    modelRepository: env.MODEL_REPOSITORY,
    modelArchiveMaxBytes: env.MODEL_ARCHIVE_MAX_BYTES,
    modelArchiveMaxRatio: env.MODEL_ARCHIVE_MAX_RATIO,
    objectStore: objectStoreConfig(env),
    maxDirectResultBytes: env.MAX_DIRECT_RESULT_BYTES,
    streamChunkRows: env.STREAM_CHUNK_ROWS,
    resultObjectTtlSeconds: env.RESULT_OBJECT_TTL_SECONDS,
    workerId: env.WORKER_ID || `worker-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    machine: {
      pool: env.WORKER_POOL,
      gpu: env.WORKER_GPU,
      instanceType: env.WORKER_INSTANCE_TYPE || `${env.WORKER_GPU.toLowerCase()}.x1`,
    },
    concurrency: env.WORKER_CONCURRENCY,
    functionVersionIds: env.WORKER_FUNCTION_VERSIONS,
    executionProviders: env.ORT_EXECUTION_PROVIDERS,
    cpuInstances: env.WORKER_CPU_INSTANCES,
    intraOpThreads: env.ORT_INTRA_OP_THREADS,
    interOpThreads: env.ORT_INTER_OP_THREADS,
    inlineMaxMicros: env.ORT_INLINE_MAX_US,
    maxTensorElements: env.MAX_TENSOR_ELEMENTS,
    maxHttpBodyBytes: env.MAX_HTTP_BODY_BYTES,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: env.WORKER_MAX_STALLED_COUNT,
    heartbeatIntervalMs: env.HEARTBEAT_INTERVAL_MS,
    deploymentSyncMs: env.DEPLOYMENT_SYNC_MS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    ncaId: env.NVCF_NCA_ID,
    host: env.WORKER_HOST,
    httpPort: env.KSERVE_HTTP_PORT,
    grpcPort: env.KSERVE_GRPC_PORT,
    metricsPort: env.METRICS_PORT,
    v1StrictReadiness: env.TRITON_V1_STRICT_READINESS,
    v1ServerId: env.TRITON_V1_SERVER_ID,
    modelControl: env.WORKER_MODEL_CONTROL_MODE,
    restrictedApis: env.WORKER_RESTRICTED_API,
    exposeFunctionModels: env.WORKER_EXPOSE_FUNCTION_MODELS,
    allowClientShm: env.WORKER_ALLOW_CLIENT_SHM,
    grpcMaxReceiveBytes: env.WORKER_GRPC_MAX_RECEIVE_BYTES,
    container: {
      url: env.WORKER_CONTAINER_URL,
      processes: env.WORKER_CONTAINER_PROCESSES,
      user: env.WORKER_CONTAINER_USER,
      sandbox: env.WORKER_CONTAINER_SANDBOX,
      workDir: env.WORKER_CONTAINER_WORK_DIR || join(tmpdir(), 'nvcf-worker'),
      timeoutMs: env.WORKER_CONTAINER_TIMEOUT_MS,
      secretsDir: env.WORKER_SECRETS_DIR,
    },
    secrets: secretsKeysConfig(env),
  };
}

/** Parses the environment once; throws with every problem listed. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return toWorkerConfig(loadEnvConfig(WorkerEnv, env, 'worker'));
}
