import { z } from 'zod';

/** AES-256 takes a 32-byte key. */
const SECRETS_KEY_BYTES = 32;

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** Standard or URL-safe base64, padded or not. */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * A 32-byte key written as base64 (`openssl rand -base64 32`: 44 characters) or hex (`openssl rand -hex 32`: 64
 * characters), or undefined when the text is neither.
 */
export function decodeSecretsKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (HEX_KEY.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (!BASE64.test(trimmed)) return undefined;
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === SECRETS_KEY_BYTES ? key : undefined;
}

const KEY_FORMAT =
  'must be 32 random bytes as base64 (44 characters: `openssl rand -base64 32`) or hex (64 characters: `openssl rand -hex 32`)';

/** An optional secrets key: empty or unset is undefined, anything else must decode to 32 bytes. */
const envSecretsKey = () =>
  z.preprocess(
    (v) => (v === undefined ? '' : v),
    z.string().transform((text, ctx): Buffer | undefined => {
      if (text.trim() === '') return undefined;
      const key = decodeSecretsKey(text);
      if (!key) ctx.addIssue({ code: 'custom', message: KEY_FORMAT });
      return key;
    }),
  );

/**
 * The key that encrypts function secrets at rest (README: Secrets), read by the gateway (which encrypts) and the
 * worker (which decrypts for the function's server). `NVCF_SECRETS_PREVIOUS_KEY`: the key being rotated out,
 * still accepted for reading.
 */
export const secretsEnv = {
  NVCF_SECRETS_KEY: envSecretsKey(),
  NVCF_SECRETS_PREVIOUS_KEY: envSecretsKey(),
};

/** What an app's config keeps of `secretsEnv`: no key, or the key and the one rotated out. */
export interface SecretsKeys {
  key?: Buffer;
  previousKey?: Buffer;
}

/** For an app's `superRefine`: a previous key alone means a rotation half done. */
export function checkSecretsEnv(
  env: { NVCF_SECRETS_KEY: Buffer | undefined; NVCF_SECRETS_PREVIOUS_KEY: Buffer | undefined },
  ctx: z.RefinementCtx,
): void {
  if (env.NVCF_SECRETS_PREVIOUS_KEY && !env.NVCF_SECRETS_KEY) {
    ctx.addIssue({
      code: 'custom',
      path: ['NVCF_SECRETS_PREVIOUS_KEY'],
      message: 'needs NVCF_SECRETS_KEY: the previous key is only read while a new one is in use',
    });
  }
}

/** The secrets part of a parsed environment. */
export function secretsKeysConfig(env: {
  NVCF_SECRETS_KEY: Buffer | undefined;
  NVCF_SECRETS_PREVIOUS_KEY: Buffer | undefined;
}): SecretsKeys {
  return {
    ...(env.NVCF_SECRETS_KEY ? { key: env.NVCF_SECRETS_KEY } : {}),
    ...(env.NVCF_SECRETS_PREVIOUS_KEY ? { previousKey: env.NVCF_SECRETS_PREVIOUS_KEY } : {}),
  };
}
