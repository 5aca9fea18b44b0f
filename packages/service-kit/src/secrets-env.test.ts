import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkSecretsEnv, decodeSecretsKey, secretsEnv, secretsKeysConfig } from './secrets-env.ts';

const Env = z.object(secretsEnv).superRefine(checkSecretsEnv);

describe('the secrets key', () => {
  const key = randomBytes(32);

  it('reads 32 bytes as base64 (padded or URL-safe) or hex', () => {
    expect(decodeSecretsKey(key.toString('base64'))).toEqual(key);
    expect(decodeSecretsKey(key.toString('base64url'))).toEqual(key);
    expect(decodeSecretsKey(key.toString('hex'))).toEqual(key);
    expect(decodeSecretsKey(` ${key.toString('hex').toUpperCase()}\n`)).toEqual(key);
  });

  it('refuses anything else', () => {
    for (const bad of [
      'x'.repeat(32),
      randomBytes(16).toString('base64'),
      randomBytes(31).toString('hex'),
      `${key.toString('base64')}!`,
      'not a key at all',
    ]) {
      expect(decodeSecretsKey(bad), bad).toBeUndefined();
    }
  });

  it('is optional, and a bad one is refused with how to make a good one', () => {
    expect(secretsKeysConfig(Env.parse({}))).toEqual({});
    expect(secretsKeysConfig(Env.parse({ NVCF_SECRETS_KEY: '' }))).toEqual({});
    const previous = randomBytes(32);
    expect(
      secretsKeysConfig(
        Env.parse({ NVCF_SECRETS_KEY: key.toString('base64'), NVCF_SECRETS_PREVIOUS_KEY: previous.toString('hex') }),
      ),
    ).toEqual({ key, previousKey: previous });
    const bad = Env.safeParse({ NVCF_SECRETS_KEY: 'hunter2' });
    expect(bad.error?.issues[0]?.message).toMatch(/openssl rand -base64 32/);
    // The key itself never appears in the problem.
    expect(JSON.stringify(bad.error?.issues)).not.toContain('hunter2');
  });

  it('refuses a previous key without a current one', () => {
    const half = Env.safeParse({ NVCF_SECRETS_PREVIOUS_KEY: key.toString('base64') });
    expect(half.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['NVCF_SECRETS_PREVIOUS_KEY', expect.stringMatching(/needs NVCF_SECRETS_KEY/)],
    ]);
  });
});
