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
  LOG_LEVEL: envLogLevel(),
};
