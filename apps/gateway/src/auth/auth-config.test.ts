import { describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../config.ts';

describe('gateway auth configuration', () => {
  it('refuses a bootstrap admin key shorter than 32 characters', () => {
    expect(() => loadGatewayConfig({ NVCF_BOOTSTRAP_ADMIN_KEY: 'nvapi-short-admin-key' })).toThrow(
      /NVCF_BOOTSTRAP_ADMIN_KEY.*32/,
    );
    const key = `nvapi-${'k'.repeat(26)}`;
    expect(loadGatewayConfig({ NVCF_BOOTSTRAP_ADMIN_KEY: key }).bootstrapAdminKey).toBe(key);
  });

  it('caps token lifetime at 24 h unless told otherwise, and checks iss/aud only when set', () => {
    expect(loadGatewayConfig({}).jwt).toEqual({ maxTtlSeconds: 86_400 });
    const c = loadGatewayConfig({
      NVCF_JWT_SECRET: 's'.repeat(32),
      NVCF_JWT_MAX_TTL_SECONDS: '600',
      NVCF_JWT_ISSUER: 'https://issuer.example',
      NVCF_JWT_AUDIENCE: 'nvcf-gateway',
    });
    expect(c.jwt).toEqual({
      secret: 's'.repeat(32),
      maxTtlSeconds: 600,
      issuer: 'https://issuer.example',
      audience: 'nvcf-gateway',
    });
    expect(() => loadGatewayConfig({ NVCF_JWT_MAX_TTL_SECONDS: '0' })).toThrow(/NVCF_JWT_MAX_TTL_SECONDS/);
  });
});
