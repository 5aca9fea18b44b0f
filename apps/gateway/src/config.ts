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

/** The gateway's variables, each on its own (`pick` a few: the checks across variables are `GatewayEnv`'s). */
export const GatewayEnvFields = z.object({
  ...sharedEnv,
  ...tracingEnv('nvcf-gateway'),
  GATEWAY_HOST: envString('0.0.0.0'),
  GATEWAY_PORT: envInt(8080, 0, 65535),
  GATEWAY_GRPC_PORT: envInt(8081, -1, 65535),
  GATEWAY_METRICS_PORT: envInt(8082, -1, 65535),
  GATEWAY_METRICS_QUEUE_CACHE_MS: envInt(2000, 0, 60_000),
  GATEWAY_CONSOLE: envBool(true),
  GATEWAY_SHUTDOWN_GRACE_MS: envInt(10_000, 0, 3_600_000),
  STREAM_RESUME_GRACE_MS: envInt(3_000, 0, 600_000),
  MAX_REQUEST_BODY_BYTES: envInt(5 * 1024 * 1024, 1),
  // The worker's setting and default: gRPC requests are decoded here, so the gateway refuses what the worker would.
  MAX_TENSOR_ELEMENTS: envInt(1 << 26, 1),
  DEFAULT_POLL_SECONDS: envInt(60, 1, 3600),
  JOB_ATTEMPTS: envInt(3, 1, 100),
  FUNCTION_CACHE_MS: envInt(1000, 0, 60_000),
  INLINE_RESULT_MAX_BYTES: envInt(64 * 1024, 0, 5 * 1024 * 1024),
  JOB_INLINE_INPUT_BYTES: envInt(64 * 1024, 0, 5 * 1024 * 1024),
  SEQUENCE_OWNER_TTL_SECONDS: envInt(3600, 1),
  NVCF_BOOTSTRAP_ADMIN_KEY: envString('').refine((s) => s === '' || s.length >= 32, 'must be at least 32 characters'),
  NVCF_JWT_SECRET: envString('').refine((s) => s === '' || s.length >= 32, 'must be at least 32 characters'),
  NVCF_JWT_MAX_TTL_SECONDS: envInt(24 * 60 * 60, 1),
  NVCF_JWT_ISSUER: envString(''),
  NVCF_JWT_AUDIENCE: envString(''),
  AUTH_CACHE_MS: envInt(2000, 0, 60_000),
  MAX_QUEUE_DEPTH: envInt(100_000, 0),
  MAX_QUEUE_BYTES_PER_VERSION: envInt(256 * 1024 * 1024, 0),
  MAX_QUEUE_BYTES_PER_ACCOUNT: envInt(128 * 1024 * 1024, 0),
  RATE_LIMIT_PER_MINUTE: envInt(6000, 0),
  RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: envInt(30_000, 0),
  MAX_OPEN_REQUESTS_PER_CREDENTIAL: envInt(256, 0),
  GATEWAY_BODY_TIMEOUT_MS: envInt(60_000, 1000, 3_600_000),
  ...objectStoreEnv,
  URL_SIGNING_SECRET: envString('').refine((s) => s === '' || s.length >= 32, 'must be at least 32 characters'),
  PUBLIC_BASE_URL: envString('').refine(
    (s) => s === '' || (/^https?:\/\//.test(s) && URL.canParse(s)),
    'must be an http(s) URL',
  ),
  ASSET_MAX_BYTES: envInt(1024 * 1024 * 1024, 1),
  MODEL_ARCHIVE_MAX_BYTES: envInt(2 * 1024 * 1024 * 1024, 1),
  MODEL_ARCHIVE_MAX_RATIO: envInt(200, 1),
  ASSET_TTL_SECONDS: envInt(24 * 60 * 60, 60),
  ASSET_QUOTA_BYTES: envInt(10 * 1024 * 1024 * 1024, 0),
  ASSET_QUOTA_COUNT: envInt(1000, 0),
  FUNCTION_QUOTA_COUNT: envInt(100, 0),
  FUNCTION_VERSION_QUOTA_COUNT: envInt(50, 0),
  API_KEY_QUOTA_COUNT: envInt(100, 0),
  STORAGE_SWEEP_MS: envInt(60_000, 100),
  NVCF_NCA_ID: envString('self-hosted'),
  FORWARD_HEADERS: envString(''),
  ...secretsEnv,
});
export const GatewayEnv = GatewayEnvFields.superRefine(checkSecretsEnv);
export type GatewayEnv = z.infer<typeof GatewayEnv>;

export interface GatewayConfig {
  host: string;
  port: number;
  /** gRPC port (inference.GRPCInferenceService routed by `function-id` metadata); -1 disables, 0 picks one. */
  grpcPort: number;
  /** Prometheus `GET /metrics` port, no API key; -1 disables, 0 picks one. */
  metricsPort: number;
  /** Queue depths and live workers are read from Redis at most this often, however many scrapes come. */
  metricsQueueCacheMs: number;
  /** The web console at `/console` (static files; every call it makes is the public API with the user's key). */
  console: boolean;
  /** How long a stopping gateway lets open event streams run before it cuts them. */
  shutdownGraceMs: number;
  /** How long a request whose starting event stream dropped waits for a resume before it is cancelled. */
  streamResumeGraceMs: number;
  redisUrl: string;
  /** Non-blocking Redis commands fail after this long (503 to the client, never a hang). */
  redisCommandTimeoutMs: number;
  keyPrefix: string;
  requestTtlSeconds: number;
  /** Largest invocation body; on gRPC, the largest queued ModelInfer (its message may be 64 KiB more). */
  maxRequestBodyBytes: number;
  /** Per-tensor element limit of gRPC ModelInfer inputs (INVALID_ARGUMENT past it), as the worker's. */
  maxTensorElements: number;
  defaultPollSeconds: number;
  jobAttempts: number;
  functionCacheMs: number;
  maxInlineResultBytes: number;
  /** Inputs larger than this travel beside their job (in the request store), not inside it. */
  maxJobInputBytes: number;
  /** How long a sequence keeps its worker after its latest request (sequence routing). */
  sequenceOwnerTtlSeconds: number;
  /** An API key with every scope, created once (never again once revoked): the operator's first credential. */
  bootstrapAdminKey?: string;
  /** Bearer tokens: accepted only with a secret; `iss` / `aud` checked only when set. */
  jwt: { secret?: string; maxTtlSeconds: number; issuer?: string; audience?: string };
  authCacheMs: number;
  /** Waiting requests per function version before 429 (0: unbounded). */
  maxQueueDepth: number;
  /** Bytes of jobs and inputs one version's queues hold (waiting or running) before 429 (0: unbounded). */
  maxQueueBytesPerVersion: number;
  /** Bytes of jobs and inputs one account's requests hold in every queue together before 429 (0: unbounded). */
  maxQueueBytesPerAccount: number;
  /** Calls (invocations, polls, streams) per credential per minute before 429 (0: unlimited). */
  rateLimitPerMinute: number;
  /** Calls per account per minute, all its credentials together (0: unlimited). */
  rateLimitPerAccountPerMinute: number;
  /** Open long-polls and event streams per credential on one gateway before 429 (0: unlimited). */
  maxOpenRequestsPerCredential: number;
  /** A request whose headers and body have not all arrived by then is answered 408 and closed. */
  bodyTimeoutMs: number;
  /** Assets, function models and large results (a local directory or S3-compatible storage). */
  objectStore: ObjectStoreConfig;
  /** HMAC secret of signed upload URLs; every gateway must share it (random per process when unset). */
  urlSigningSecret?: string;
  /** The gateway's address as clients reach it, for the upload URLs it hands out. */
  publicBaseUrl?: string;
  assetMaxBytes: number;
  /** A zipped model directory may unpack to this many bytes (400 above: a zip bomb is never unpacked). */
  modelArchiveMaxBytes: number;
  /** An archive entry past 1 MiB may inflate to this many times its compressed size (400 above). */
  modelArchiveMaxRatio: number;
  assetTtlSeconds: number;
  /** Per owner: total bytes of live assets (403 past it; 0: unlimited). */
  assetQuotaBytes: number;
  /** Per owner: live assets (403 past it; 0: unlimited). */
  assetQuotaCount: number;
  /** Per account: functions (403 past it; 0: unlimited). */
  functionQuotaCount: number;
  /** Per function: versions (403 past it; 0: unlimited). */
  functionVersionQuotaCount: number;
  /** Per account: live (unrevoked) API keys (403 past it; 0: unlimited). */
  apiKeyQuotaCount: number;
  /** How often expired assets and results are looked for and deleted. */
  storageSweepMs: number;
  ncaId: string;
  /** Client headers passed to functions besides the defaults (comma-separated names). */
  forwardHeaders: string[];
  logLevel: string;
  /** OpenTelemetry traces (off when its endpoint is empty). */
  tracing: TracingOptions;
  /** The key function secrets are encrypted with (none: a request that carries secrets is refused, 400). */
  secrets: SecretsKeys;
}

export function toGatewayConfig(env: GatewayEnv): GatewayConfig {
  return {
    host: env.GATEWAY_HOST,
    port: env.GATEWAY_PORT,
    grpcPort: env.GATEWAY_GRPC_PORT,
    metricsPort: env.GATEWAY_METRICS_PORT,
    metricsQueueCacheMs: env.GATEWAY_METRICS_QUEUE_CACHE_MS,
    console: env.GATEWAY_CONSOLE,
    shutdownGraceMs: env.GATEWAY_SHUTDOWN_GRACE_MS,
    streamResumeGraceMs: env.STREAM_RESUME_GRACE_MS,
    redisUrl: env.REDIS_URL,
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    keyPrefix: env.NVCF_KEY_PREFIX,
    requestTtlSeconds: env.REQUEST_TTL_SECONDS,
    maxRequestBodyBytes: env.MAX_REQUEST_BODY_BYTES,
    maxTensorElements: env.MAX_TENSOR_ELEMENTS,
    defaultPollSeconds: env.DEFAULT_POLL_SECONDS,
    jobAttempts: env.JOB_ATTEMPTS,
    functionCacheMs: env.FUNCTION_CACHE_MS,
    maxInlineResultBytes: env.INLINE_RESULT_MAX_BYTES,
    maxJobInputBytes: env.JOB_INLINE_INPUT_BYTES,
    sequenceOwnerTtlSeconds: env.SEQUENCE_OWNER_TTL_SECONDS,
    ...(env.NVCF_BOOTSTRAP_ADMIN_KEY ? { bootstrapAdminKey: env.NVCF_BOOTSTRAP_ADMIN_KEY } : {}),
    jwt: {
      ...(env.NVCF_JWT_SECRET ? { secret: env.NVCF_JWT_SECRET } : {}),
      maxTtlSeconds: env.NVCF_JWT_MAX_TTL_SECONDS,
      ...(env.NVCF_JWT_ISSUER ? { issuer: env.NVCF_JWT_ISSUER } : {}),
      ...(env.NVCF_JWT_AUDIENCE ? { audience: env.NVCF_JWT_AUDIENCE } : {}),
    },
    authCacheMs: env.AUTH_CACHE_MS,
    maxQueueDepth: env.MAX_QUEUE_DEPTH,
    maxQueueBytesPerVersion: env.MAX_QUEUE_BYTES_PER_VERSION,
    maxQueueBytesPerAccount: env.MAX_QUEUE_BYTES_PER_ACCOUNT,
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    rateLimitPerAccountPerMinute: env.RATE_LIMIT_PER_ACCOUNT_PER_MINUTE,
    maxOpenRequestsPerCredential: env.MAX_OPEN_REQUESTS_PER_CREDENTIAL,
    bodyTimeoutMs: env.GATEWAY_BODY_TIMEOUT_MS,
    objectStore: objectStoreConfig(env),
    ...(env.URL_SIGNING_SECRET ? { urlSigningSecret: env.URL_SIGNING_SECRET } : {}),
    ...(env.PUBLIC_BASE_URL ? { publicBaseUrl: env.PUBLIC_BASE_URL } : {}),
    assetMaxBytes: env.ASSET_MAX_BYTES,
    modelArchiveMaxBytes: env.MODEL_ARCHIVE_MAX_BYTES,
    modelArchiveMaxRatio: env.MODEL_ARCHIVE_MAX_RATIO,
    assetTtlSeconds: env.ASSET_TTL_SECONDS,
    assetQuotaBytes: env.ASSET_QUOTA_BYTES,
    assetQuotaCount: env.ASSET_QUOTA_COUNT,
    functionQuotaCount: env.FUNCTION_QUOTA_COUNT,
    functionVersionQuotaCount: env.FUNCTION_VERSION_QUOTA_COUNT,
    apiKeyQuotaCount: env.API_KEY_QUOTA_COUNT,
    storageSweepMs: env.STORAGE_SWEEP_MS,
    ncaId: env.NVCF_NCA_ID,
    forwardHeaders: env.FORWARD_HEADERS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: env.LOG_LEVEL,
    tracing: tracingConfig(env),
    secrets: secretsKeysConfig(env),
  };
}

/** Parses the environment once; throws with every problem listed. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return toGatewayConfig(loadEnvConfig(GatewayEnv, env, 'gateway'));
}
