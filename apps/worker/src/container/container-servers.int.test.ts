import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import { createLogger } from '@nvcf/service-kit';
import { SERVER_USER, type ServerRuntime, serverRuntime } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContainerServers, type ContainerServersOptions, createContainerServers } from './container-servers.ts';
import { resolveSandbox } from './server-sandbox.ts';
import { parseServerUser } from './server-user.ts';
import { readSecrets, type VersionSecrets } from './version-secrets.ts';

/**
 * A server that plays a hostile function: it reports its uid, every other process's environment it can read
 * (the worker's, a sibling server's), whether it can write outside its work dir, and its HOME.
 */
const PROBE = `
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
const readable = (path) => { try { return readFileSync(path, 'utf8'); } catch { return undefined; } };
createServer((req, res) => {
  if (req.url === '/health') return res.end('ok');
  const environs = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    const text = readable('/proc/' + name + '/environ');
    if (text) environs.push(text);
  }
  let wroteOutside = true;
  try { writeFileSync('/nvcf-probe-' + process.pid, 'x'); } catch { wroteOutside = false; }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ uid: process.getuid(), environs, wroteOutside, home: process.env.HOME }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** examples/echo-server answers with an id of its run and its environment. */
const ECHO = resolve(import.meta.dirname, '../../../../examples/echo-server/server.ts');
const ECHO_PACKAGE = resolve(import.meta.dirname, '../../../../examples/echo-server/package.json');
const log = createLogger({ name: 'test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
/** The servers' user where this test runs as root: the worker refuses process mode as root without one. */
const user = process.getuid?.() === 0 ? parseServerUser(SERVER_USER) : undefined;
let dir: string;
let workDir: string;
let runtime: ServerRuntime;
let echo: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-container-servers-'));
  workDir = join(dir, 'work');
  await mkdir(workDir, { mode: 0o711 });
  await chmod(dir, 0o711);
  runtime = await serverRuntime([ECHO, ECHO_PACKAGE, { name: 'probe.mjs', text: PROBE }]);
  echo = runtime.command(ECHO);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await runtime?.remove();
});

/** Process mode as the worker runs it: trusting account 'nca' only, its servers sandboxed where bubblewrap works. */
function processServers(over: Partial<ContainerServersOptions> = {}): ContainerServers {
  return createContainerServers({
    url: '',
    processes: true,
    intervalMs: 60_000,
    log,
    onChange: () => {},
    trust: { versionIds: [], ncaId: 'nca' },
    sandbox: resolveSandbox('auto', user, [workDir]),
    workDir,
    ...over,
  });
}

function version(args?: string, ncaId = 'nca') {
  const container = ContainerSpec.parse({
    image: 'img',
    ...(args ? { args } : {}),
    health: { uri: '/health', timeoutMs: 1000, expectedStatusCode: 200 },
  });
  const fv = FunctionVersion.parse({
    id: randomUUID(),
    versionId: randomUUID(),
    name: 'unit',
    ncaId,
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
): Promise<{ instance: string; env: Record<string, string> }> {
  await until(async () => {
    await servers.checkAll();
    return servers.instance(versionId)?.healthy === true;
  }, 'a healthy server');
  const base = servers.instance(versionId)?.base ?? '';
  const res = await fetch(new URL('/echo', base), { method: 'POST', body: '{}' });
  return (await res.json()) as { instance: string; env: Record<string, string> };
}

describe('container servers: secrets, process mode', () => {
  it('starts the server with them, restarts it when they change, keeps it when they cannot be read', async () => {
    const servers = processServers();
    try {
      const fv = version(echo);
      const secrets = (s: VersionSecrets) => new Map([[fv.versionId, s]]);
      await servers.want([fv], secrets(readSecrets({ TOKEN: 'first', PORT: 'not ours' })));
      const first = await seen(servers, fv.versionId);
      expect(first.env.TOKEN).toBe('first');
      expect(first.env.PORT).not.toBe('not ours'); // the worker's variables win
      // The function's own account (its owner's, when it is shared), whatever the worker's NVCF_NCA_ID.
      expect(first.env.NVCF_NCA_ID).toBe(fv.ncaId);

      // Unchanged: the same process.
      await servers.want([fv], secrets(readSecrets({ PORT: 'not ours', TOKEN: 'first' })));
      expect((await seen(servers, fv.versionId)).instance).toBe(first.instance);

      const firstBase = servers.instance(fv.versionId)?.base.href;
      await servers.want([fv], secrets(readSecrets({ TOKEN: 'second' })));
      await until(() => servers.instance(fv.versionId)?.base.href !== firstBase, 'the new server to take over');
      const second = await seen(servers, fv.versionId);
      expect(second.instance).not.toBe(first.instance);
      expect(second.env.TOKEN).toBe('second');

      // Unreadable (a key that does not open them): the running server keeps what it has.
      await servers.want([fv], secrets({ ok: false, reason: 'encrypted with key 0badc0de' }));
      expect((await seen(servers, fv.versionId)).instance).toBe(second.instance);

      // A version whose secrets cannot be read is not started at all.
      const other = version(echo);
      await servers.want([fv, other], new Map([[other.versionId, { ok: false, reason: 'no NVCF_SECRETS_KEY' }]]));
      expect(servers.instance(other.versionId)).toBeUndefined();
      expect(servers.instance(fv.versionId)).toBeDefined();
    } finally {
      await servers.close();
    }
  });
});

describe('container servers: new secrets are a rolling replacement, not a gap', () => {
  it('keeps serving on the old server until the new one is healthy, and stops the old one once it has answered', async () => {
    const gates = join(workDir, 'gates');
    await mkdir(gates, { recursive: true });
    await chmod(gates, 0o777);
    const gate = join(gates, randomUUID());
    const servers = processServers();
    try {
      const fv = version(echo);
      const secrets = (token: string) => new Map([[fv.versionId, readSecrets({ TOKEN: token })]]);
      await servers.want([fv], secrets('first'));
      const first = await seen(servers, fv.versionId);
      const old = servers.instance(fv.versionId);
      if (!old) throw new Error('no server');
      // A request the old server is answering (held open by its gate), as the container processor holds it.
      const release = old.hold();
      const held = fetch(new URL('/echo', old.base), {
        method: 'POST',
        headers: { 'nvcf-reqid': 'held-request' },
        body: JSON.stringify({ action: 'hold', gate }),
      });
      await until(() => existsSync(`${gate}.entered-held-request`), 'the old server to hold the request');

      await servers.want([fv], secrets('second'));
      // Until the new server answers its health check, the version is still served, by the old one.
      expect(servers.instance(fv.versionId)?.base.href).toBe(old.base.href);
      expect(servers.instance(fv.versionId)?.healthy).toBe(true);
      await until(() => servers.instance(fv.versionId)?.base.href !== old.base.href, 'the new server to take over');
      expect(servers.instance(fv.versionId)?.healthy).toBe(true);
      const second = await seen(servers, fv.versionId);
      expect(second.env.TOKEN).toBe('second');
      expect(second.instance).not.toBe(first.instance);

      // The old one still answers what it holds, and only then stops.
      await writeFile(gate, '');
      expect((await held).status).toBe(200);
      const stillUp = await fetch(new URL('/health', old.base)).then(
        (res) => res.status,
        () => 0,
      );
      expect(stillUp).toBe(200);
      release();
      await until(
        () =>
          fetch(new URL('/health', old.base)).then(
            () => false,
            () => true,
          ),
        'the old server to stop',
      );
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
      trust: { versionIds: [], ncaId: 'nca' },
      workDir,
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

describe('container servers: process mode trusts the operator, not the tenant', () => {
  it("runs only its own account's containerArgs, or only the versions an operator named", async () => {
    const open = join(workDir, 'open');
    await mkdir(open, { recursive: true });
    await chmod(open, 0o777);
    const marker = join(open, 'another-account-ran');
    const mine = version(echo);
    // Another account's admin registered and deployed this: a shell on the worker's host if it ran.
    const theirs = version(`touch '${marker}'; ${echo}`, 'team-b');
    const servers = processServers();
    try {
      await servers.want([mine, theirs]);
      expect(servers.instance(theirs.versionId)).toBeUndefined();
      await seen(servers, mine.versionId);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await servers.close();
    }
    // WORKER_FUNCTION_VERSIONS: exactly the named versions, whoever owns them.
    const named = processServers({ trust: { versionIds: [theirs.versionId], ncaId: 'nca' } });
    try {
      await named.want([mine, theirs]);
      expect(named.instance(mine.versionId)).toBeUndefined();
      await seen(named, theirs.versionId);
      expect(existsSync(marker)).toBe(true);
    } finally {
      await named.close();
      await rm(marker, { force: true });
    }
  });

  it("a server is not the worker: its own user, read-only host, no worker's or sibling's environment", async () => {
    // Bubblewrap is required here (scripts/nvcf.sh installs it): this is the sandbox under test.
    const servers = processServers({ sandbox: resolveSandbox('bwrap', user, [workDir]) });
    const probe = runtime.command('probe.mjs');
    const a = version(probe);
    const b = version(probe);
    const secretA = `a-${randomUUID()}`;
    const secretB = `b-${randomUUID()}`;
    // This test process stands for the worker: a line of its own environment no server is given.
    const workerLine = readFileSync('/proc/self/environ', 'utf8')
      .split('\0')
      .find((line) => line.startsWith('VITEST'));
    expect(workerLine).toBeDefined();
    try {
      await servers.want(
        [a, b],
        new Map([
          [a.versionId, readSecrets({ TOKEN: secretA })],
          [b.versionId, readSecrets({ TOKEN: secretB })],
        ]),
      );
      for (const [fv, sibling] of [
        [a, secretB],
        [b, secretA],
      ] as const) {
        await until(async () => {
          await servers.checkAll();
          return servers.instance(fv.versionId)?.healthy === true;
        }, 'a healthy probe');
        const res = await fetch(new URL('/probe', servers.instance(fv.versionId)?.base ?? ''));
        const seenBy = (await res.json()) as { uid: number; environs: string[]; wroteOutside: boolean; home: string };
        if (user) expect(seenBy.uid).toBe(user.uid);
        expect(seenBy.environs.some((env) => env.includes(sibling))).toBe(false);
        expect(seenBy.environs.some((env) => env.includes(workerLine ?? '\0'))).toBe(false);
        expect(seenBy.wroteOutside).toBe(false);
        expect(seenBy.home.startsWith(workDir)).toBe(true);
      }
    } finally {
      await servers.close();
    }
  });
});
