import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type RedisHandle, startRedis } from '@nvcf/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

/** The TCP addresses (`ip:port`) a process listens on, read from /proc (Linux). */
function listeningAddresses(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // The descriptor closed while we read the directory.
    }
  }
  const found: string[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // cols: sl local_address rem_address st … inode (10th); 0A is LISTEN.
      const [local, state, inode] = [cols[1], cols[3], cols[9]];
      if (!local || state !== '0A' || !inode || !inodes.has(inode)) continue;
      const [hex = '', port = ''] = local.split(':');
      found.push(`${decodeAddress(hex)}:${Number.parseInt(port, 16)}`);
    }
  }
  return found;
}

/** /proc/net/tcp writes IPv4 as one little-endian word, IPv6 as four. */
function decodeAddress(hex: string): string {
  const bytes = Buffer.from(hex, 'hex');
  for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}

let redis: RedisHandle;
let models: string;
let start: ChildProcess | undefined;
let output = '';

beforeAll(async () => {
  // A private Redis, never the .data/redis of a developer's own quick start.
  redis = await startRedis({ env: {} });
  models = mkdtempSync(join(tmpdir(), 'nvcf-start-'));
});
afterAll(async () => {
  if (start && start.exitCode === null && start.signalCode === null) {
    const exited = new Promise((r) => start?.once('exit', r));
    start.kill('SIGTERM');
    await exited;
  }
  await redis?.close();
  rmSync(models, { recursive: true, force: true });
});

describe('bash scripts/nvcf.sh start', () => {
  it("listens on loopback only, unless GATEWAY_HOST / WORKER_HOST say otherwise; the worker gets none of the gateway's credentials", {
    timeout: 120_000,
  }, async () => {
    const { GATEWAY_HOST: _g, WORKER_HOST: _w, ...env } = process.env;
    start = spawn(process.execPath, [join(root, 'scripts/start.ts')], {
      cwd: root,
      env: {
        ...env,
        REDIS_URL: redis.url,
        MODEL_REPOSITORY: models,
        // An explicit gateway host is kept (another loopback address: it binds on any Linux); the worker's is
        // left unset and so defaults to 127.0.0.1.
        GATEWAY_HOST: '127.0.0.2',
        // Free ports: other tests run beside this one.
        GATEWAY_PORT: '0',
        GATEWAY_GRPC_PORT: '0',
        GATEWAY_METRICS_PORT: '0',
        KSERVE_HTTP_PORT: '0',
        KSERVE_GRPC_PORT: '0',
        METRICS_PORT: '0',
        NVCF_BOOTSTRAP_ADMIN_KEY: `nvapi-${'a'.repeat(43)}`,
        URL_SIGNING_SECRET: 'b'.repeat(43),
        NVCF_JWT_SECRET: 'c'.repeat(43),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    start.stdout?.on('data', (b: Buffer) => {
      output += b.toString();
    });
    start.stderr?.on('data', (b: Buffer) => {
      output += b.toString();
    });
    const pidOf = (name: string, msg: string) =>
      new RegExp(`"pid":(\\d+),[^\\n]*"name":"${name}"[^\\n]*"msg":"${msg}"`).exec(output)?.[1];
    const deadline = Date.now() + 100_000;
    while (!(pidOf('gateway', 'gateway metrics listening') && pidOf('worker', 'worker ready'))) {
      if (start.exitCode !== null) throw new Error(`start.ts exited ${start.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`start.ts did not come up:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const gateway = listeningAddresses(Number(pidOf('gateway', 'gateway metrics listening')));
    const worker = listeningAddresses(Number(pidOf('worker', 'worker ready')));
    // HTTP, gRPC and metrics each.
    expect(gateway.length).toBeGreaterThanOrEqual(3);
    expect(worker.length).toBeGreaterThanOrEqual(3);
    for (const address of gateway) expect(address).toMatch(/^127\.0\.0\.2:\d+$/);
    for (const address of worker) expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(output).toMatch(/NVCF gateway {3}http:\/\/127\.0\.0\.2:0 /);

    // What a worker runs can read its environment at worst: the gateway's credentials are not in it.
    const credentials = (pid: string | undefined) =>
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter((e) => /^(NVCF_BOOTSTRAP_ADMIN_KEY|URL_SIGNING_SECRET|NVCF_JWT_SECRET)=/.test(e))
        .map((e) => e.split('=')[0]);
    expect(credentials(pidOf('worker', 'worker ready'))).toEqual([]);
    expect(credentials(pidOf('gateway', 'gateway metrics listening')).sort()).toEqual([
      'NVCF_BOOTSTRAP_ADMIN_KEY',
      'NVCF_JWT_SECRET',
      'URL_SIGNING_SECRET',
    ]);
  });
});
