import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startRedis } from '@nvcf/testing';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';

const SECRET = 'a-cli-test-secret-that-is-at-least-32-characters';
const script = join(import.meta.dirname, 'keys.ts');

/** Runs `pnpm keys …` (the script itself) with only the given environment. */
function keys(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '', NVCF_JWT_SECRET: SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr.on('data', (d) => {
    stderr += String(d);
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}
const verify = (jwt: string) => jwtVerify(jwt, new TextEncoder().encode(SECRET), { algorithms: ['HS256'] });

describe('keys token', () => {
  it('needs --subject: tokens without one would share a principal (assets, rate bucket)', async () => {
    const res = await keys(['token', '--scopes', 'invoke_function']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--subject/);
    expect(res.stdout).toBe('');
  });

  it('refuses a --ttl above NVCF_JWT_MAX_TTL_SECONDS (24 h by default) or not a positive integer', async () => {
    const base = ['token', '--scopes', 'invoke_function', '--subject', 'ci'];
    for (const [ttl, env] of [
      ['86401', {}],
      ['601', { NVCF_JWT_MAX_TTL_SECONDS: '600' }],
      ['0', {}],
      ['ten', {}],
    ] as const) {
      const res = await keys([...base, '--ttl', ttl], env);
      expect(res.code, ttl).toBe(1);
      expect(res.stderr).toMatch(/--ttl/);
      expect(res.stdout).toBe('');
    }
  });

  it('signs a token with the subject, a lifetime within the cap, and the configured iss/aud', async () => {
    const res = await keys(
      [
        'token',
        '--scopes',
        'invoke_function,list_functions',
        '--functions',
        'f1,f2',
        '--subject',
        'ci',
        '--ttl',
        '600',
      ],
      { NVCF_JWT_MAX_TTL_SECONDS: '600', NVCF_JWT_ISSUER: 'https://issuer.example', NVCF_JWT_AUDIENCE: 'nvcf' },
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const { payload } = await verify(res.stdout.trim());
    expect(payload).toMatchObject({
      sub: 'ci',
      scope: 'invoke_function list_functions',
      function_ids: ['f1', 'f2'],
      iss: 'https://issuer.example',
      aud: 'nvcf',
    });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(600);
  });
});

describe('keys for another account (--nca-id)', () => {
  it('signs a token carrying nca_id, and refuses one that is not an NCA id', async () => {
    const res = await keys(['token', '--scopes', 'invoke_function', '--subject', 'ci', '--nca-id', 'team-b']);
    expect(res.stderr).toBe('');
    const { payload } = await verify(res.stdout.trim());
    expect(payload).toMatchObject({ sub: 'ci', nca_id: 'team-b' });
    const bad = await keys(['token', '--scopes', 'invoke_function', '--subject', 'ci', '--nca-id', 'two words']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--nca-id must be/);
  });

  it('creates a key in that account and lists it with its account', async () => {
    const redis = await startRedis();
    try {
      const env = { REDIS_URL: redis.url, NVCF_KEY_PREFIX: `t${crypto.randomUUID().slice(0, 8)}` };
      const made = await keys(['create', '--name', 'b-ci', '--scopes', 'invoke_function', '--nca-id', 'team-b'], env);
      expect(made.code, made.stderr).toBe(0);
      expect(JSON.parse(made.stdout)).toMatchObject({ name: 'b-ci', ncaId: 'team-b', key: expect.any(String) });
      const listed = await keys(['list'], env);
      expect(listed.stdout).toMatch(/b-ci {2}active {2}scopes=invoke_function nca=team-b/);
    } finally {
      await redis.close();
    }
  });
});
