import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ContainerSpec, FunctionVersion } from '@nvcf/queue';
import { createLogger } from '@nvcf/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContainerServers, createContainerServers } from './container-servers.ts';
import { readSecrets, type VersionSecrets } from './version-secrets.ts';

/** examples/echo-server answers with its pid and environment. */
const ECHO = resolve(import.meta.dirname, '../../../../examples/echo-server/server.ts');
const log = createLogger({ name: 'test', level: 'silent' });
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-container-servers-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function version(args?: string) {
  const container = ContainerSpec.parse({
    image: 'img',
    ...(args ? { args } : {}),
    health: { uri: '/health', timeoutMs: 1000, expectedStatusCode: 200 },
  });
  const fv = FunctionVersion.parse({
    id: randomUUID(),
    versionId: randomUUID(),
    name: 'unit',
    ncaId: 'nca',
    createdAt: new Date().toISOString(),
    inferenceUrl: '/echo',
    deployment: null,
    container,
  });
  return { ...fv, container };
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** What the server of a version answers: its pid and environment. */
async function seen(
  servers: ContainerServers,
  versionId: string,
): Promise<{ pid: number; env: Record<string, string> }> {
  await until(async () => {
    await servers.checkAll();
    return servers.instance(versionId)?.healthy === true;
  }, 'a healthy server');
  const base = servers.instance(versionId)?.base ?? '';
  const res = await fetch(new URL('/echo', base), { method: 'POST', body: '{}' });
  return (await res.json()) as { pid: number; env: Record<string, string> };
}

describe('container servers: secrets, process mode', () => {
  it('starts the server with them, restarts it when they change, keeps it when they cannot be read', async () => {
    const servers = createContainerServers({
      url: '',
      processes: true,
      intervalMs: 60_000,
      log,
      onChange: () => {},
    });
    try {
      const fv = version(`'${process.execPath}' '${ECHO}'`);
      const secrets = (s: VersionSecrets) => new Map([[fv.versionId, s]]);
      await servers.want([fv], secrets(readSecrets({ TOKEN: 'first', PORT: 'not ours' })));
      const first = await seen(servers, fv.versionId);
      expect(first.env.TOKEN).toBe('first');
      expect(first.env.PORT).not.toBe('not ours'); // the worker's variables win
      // The function's own account (its owner's, when it is shared), whatever the worker's NVCF_NCA_ID.
      expect(first.env.NVCF_NCA_ID).toBe(fv.ncaId);

      // Unchanged: the same process.
      await servers.want([fv], secrets(readSecrets({ PORT: 'not ours', TOKEN: 'first' })));
      expect((await seen(servers, fv.versionId)).pid).toBe(first.pid);

      await servers.want([fv], secrets(readSecrets({ TOKEN: 'second' })));
      const second = await seen(servers, fv.versionId);
      expect(second.pid).not.toBe(first.pid);
      expect(second.env.TOKEN).toBe('second');

      // Unreadable (a key that does not open them): the running server keeps what it has.
      await servers.want([fv], secrets({ ok: false, reason: 'encrypted with key 0badc0de' }));
      expect((await seen(servers, fv.versionId)).pid).toBe(second.pid);

      // A version whose secrets cannot be read is not started at all.
      const other = version(`'${process.execPath}' '${ECHO}'`);
      await servers.want([fv, other], new Map([[other.versionId, { ok: false, reason: 'no NVCF_SECRETS_KEY' }]]));
      expect(servers.instance(other.versionId)).toBeUndefined();
      expect(servers.instance(fv.versionId)).toBeDefined();
    } finally {
      await servers.close();
    }
  });
});

describe('container servers: secrets, sidecar mode', () => {
  it('writes secrets.json (0600) into the secrets dir, rewrites it when they change, removes it when unserved', async () => {
    const secretsDir = join(dir, 'secrets');
    const servers = createContainerServers({
      // Nothing listens there: health fails, which the secrets file does not wait for.
      url: 'http://127.0.0.1:9',
      processes: false,
      intervalMs: 60_000,
      secretsDir,
      log,
      onChange: () => {},
    });
    try {
      const fv = version();
      const file = join(secretsDir, 'secrets.json');
      const content = async () => JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
      await servers.want([fv], new Map([[fv.versionId, readSecrets({ TOKEN: 'first' })]]));
      expect(await content()).toEqual({ TOKEN: 'first' });
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      await servers.want([fv], new Map([[fv.versionId, readSecrets({ TOKEN: 'second', MORE: 'x' })]]));
      expect(await content()).toEqual({ TOKEN: 'second', MORE: 'x' });
      await servers.want([]);
      expect(existsSync(file)).toBe(false);
    } finally {
      await servers.close();
    }
  });
});
