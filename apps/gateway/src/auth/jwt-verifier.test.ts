import { AppError } from '@nvcf/protocol';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwtVerifier } from './jwt-verifier.ts';

const SECRET = 'a-test-secret-that-is-at-least-32-characters-long';
const verify = createJwtVerifier({ secret: SECRET, maxTtlSeconds: 3600 }, 'self-hosted');

const sign = () =>
  new SignJWT({ scope: 'invoke_function' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('ci-job')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

const refusal = async (token: string) => {
  const err = await verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err instanceof AppError ? { code: err.code, message: err.message } : undefined;
};

describe('createJwtVerifier', () => {
  it('accepts a well-formed token signed with the secret', async () => {
    const principal = await verify(await sign());
    expect(principal.subject).toBe('token:ci-job');
  });

  it('refuses any spelling but three unpadded base64url segments, with the answer a bad token gets', async () => {
    const token = await sign();
    const [header, payload, signature] = token.split('.');
    const forged = await refusal(`${header}.${payload}.${signature?.slice(0, -2)}xx`);
    expect(forged).toEqual({ code: 'UNAUTHENTICATED', message: 'client is unauthorized' });
    for (const variant of [
      `${token}=`,
      `${token}==`,
      `${header}=.${payload}.${signature}`,
      `${header}.${payload}=.${signature}`,
      `${header}.${payload}.${signature}\n`,
      `${header}.${payload}.${signature?.replaceAll('-', '+').replaceAll('_', '/')}`,
    ]) {
      // Only the variants that differ from the original spelling count (the last may be identical).
      if (variant === token) continue;
      expect(await refusal(variant)).toEqual(forged);
    }
  });
});
