import { z } from 'zod';

/** Env helpers: variables arrive as strings; empty means unset. */
export const envInt = (def: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess((v) => (v === '' || v === undefined ? def : v), z.coerce.number().int().min(min).max(max));

export const envString = (def: string) => z.preprocess((v) => (v === '' || v === undefined ? def : v), z.string());

export const envBool = (def: boolean) =>
  z.preprocess(
    (v) => (v === '' || v === undefined ? String(def) : String(v).toLowerCase()),
    z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((s) => s === 'true' || s === '1' || s === 'yes'),
  );

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const envLogLevel = () => z.preprocess((v) => (v === '' || v === undefined ? 'info' : v), z.enum(LOG_LEVELS));

/** Settings every process of the product shares: where Redis is and which key space is ours. */
export const sharedEnv = {
  REDIS_URL: envString('redis://127.0.0.1:6379'),
  NVCF_KEY_PREFIX: envString('nvcf'),
  REQUEST_TTL_SECONDS: envInt(3600, 60),
  /** A Redis command that has not answered by then fails (a stalled Redis must not hang clients). */
  REDIS_COMMAND_TIMEOUT_MS: envInt(2000, 50, 600_000),
  LOG_LEVEL: envLogLevel(),
  /** See countExternalMemoryInHeapLimit: off trades throughput on large bodies for a lower peak RSS. */
  GC_EXTERNAL_MEMORY_IN_HEAP_LIMIT: envBool(true),
};

/** Where assets, function models and large results are kept: a local directory, or S3-compatible storage. */
export const objectStoreEnv = {
  ASSET_STORE_DIR: envString('./.data/assets'),
  OBJECT_STORE: z.preprocess((v) => (v === '' || v === undefined ? 'local' : v), z.enum(['local', 's3'])),
  S3_ENDPOINT: envString(''),
  S3_REGION: envString('us-east-1'),
  S3_BUCKET: envString('nvcf'),
  S3_ACCESS_KEY_ID: envString(''),
  S3_SECRET_ACCESS_KEY: envString(''),
};

/** The object-store part of a parsed environment, in the shape `openObjectStore` takes. */
export function objectStoreConfig(env: {
  ASSET_STORE_DIR: string;
  OBJECT_STORE: 'local' | 's3';
  S3_ENDPOINT: string;
  S3_REGION: string;
  S3_BUCKET: string;
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
}) {
  return {
    kind: env.OBJECT_STORE,
    dir: env.ASSET_STORE_DIR,
    ...(env.OBJECT_STORE === 's3'
      ? {
          s3: {
            ...(env.S3_ENDPOINT ? { endpoint: env.S3_ENDPOINT } : {}),
            region: env.S3_REGION,
            bucket: env.S3_BUCKET,
            accessKeyId: env.S3_ACCESS_KEY_ID,
            secretAccessKey: env.S3_SECRET_ACCESS_KEY,
          },
        }
      : {}),
  };
}

/**
 * OpenTelemetry's own variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
 * tracing is off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
 */
export const tracingEnv = (serviceName: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: envString('').refine(
    (s) => s === '' || (/^https?:\/\//.test(s) && URL.canParse(s)),
    'must be an http(s) URL',
  ),
  OTEL_SERVICE_NAME: envString(serviceName),
  OTEL_BSP_SCHEDULE_DELAY: envInt(5000, 0, 3_600_000),
});

/** The tracing part of a parsed environment, in the shape `startTracing` takes. */
export function tracingConfig(env: {
  OTEL_EXPORTER_OTLP_ENDPOINT: string;
  OTEL_SERVICE_NAME: string;
  OTEL_BSP_SCHEDULE_DELAY: number;
}) {
  return {
    endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
    serviceName: env.OTEL_SERVICE_NAME,
    scheduleDelayMs: env.OTEL_BSP_SCHEDULE_DELAY,
  };
}
