import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { resultObjectKey } from '@nvcf/queue';
import { createLocalDirStore, signUrl } from '@nvcf/storage';
import { strFromU8, strToU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, type ChildGateway, createHarness, fnId, type Harness, pexec, simpleRequest } from './harness.ts';

/**
 * Every body the gateway streams, read by the clients users run: curl, a raw socket that hangs up
 * early (after the headers, mid-body, right after the body) and fetch. The gateway runs in its own
 * process so that a crash is an exit the test sees, and its open files can be counted.
 */

const run = promisify(execFile);
const SECRET = randomBytes(32).toString('base64url');
let h: Harness;
let gw: ChildGateway;
let storeDir: string;

beforeAll(async () => {
  h = await createHarness();
  storeDir = h.env.ASSET_STORE_DIR ?? '';
  // Every result is "large": each answer is a zip behind a signed URL.
  await h.worker({ MAX_DIRECT_RESULT_BYTES: '64' });
  gw = await h.spawnGateway({ URL_SIGNING_SECRET: SECRET });
});
afterAll(async () => {
  await h?.close();
});

/** A 302's Location for a fresh invocation of `simple`. */
async function resultLocation(): Promise<string> {
  const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest(), {
    'nvcf-poll-seconds': '300',
  });
  expect(res.status).toBe(302);
  return res.headers.get('location') ?? '';
}

/** A signed result URL for a stored object of `bytes` random bytes (large enough to outlast socket buffers). */
async function bigResultLocation(bytes: number): Promise<string> {
  const requestId = randomUUID();
  await createLocalDirStore(storeDir).put(resultObjectKey(requestId), randomBytes(bytes), {
    contentType: 'application/zip',
  });
  return signUrl(SECRET, {
    baseUrl: gw.url,
    method: 'GET',
    path: `/v2/nvcf/results/${requestId}`,
    expires: Math.floor(Date.now() / 1000) + 600,
  });
}

/**
 * Sends one raw HTTP/1.1 request and hangs up as `when` says: once the headers are in, after `bytes` of
 * body, or once the whole body (by its Content-Length) is in. Resolves with what it received.
 */
function rawRequest(
  url: string,
  when: 'headers' | 'body' | { bytes: number },
  req: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ head: string; body: number }> {
  const u = new URL(url);
  const payload = req.body ?? '';
  const headers = {
    Host: u.host,
    Accept: '*/*',
    ...req.headers,
    ...(payload ? { 'Content-Length': String(Buffer.byteLength(payload)) } : {}),
  };
  const lines = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    let buf = Buffer.alloc(0);
    let head = '';
    let body = 0;
    let length = Number.POSITIVE_INFINITY;
    socket.on('error', reject);
    socket.on('close', () => resolve({ head, body }));
    socket.on('connect', () =>
      socket.write(`${req.method ?? 'GET'} ${u.pathname}${u.search} HTTP/1.1\r\n${lines}\r\n${payload}`),
    );
    socket.on('data', (chunk: Buffer) => {
      if (!head) {
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = buf.subarray(0, end).toString('latin1');
        length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? Number.POSITIVE_INFINITY);
        body = buf.length - end - 4;
        if (when === 'headers') return void socket.destroy();
      } else {
        body += chunk.length;
      }
      if (typeof when === 'object' && body >= when.bytes) socket.destroy();
      else if (when === 'body' && body >= length) socket.destroy();
    });
  });
}

/** Files of the object store that the gateway process holds open right now. */
async function openStoreFiles(pid: number): Promise<string[]> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return targets.filter((t) => t.startsWith(storeDir));
}

/** The gateway is still up and answering, and (within a few seconds) holds no store file open. */
async function expectGatewayHealthy(): Promise<void> {
  expect(gw.child.exitCode).toBeNull();
  expect(gw.child.signalCode).toBeNull();
  expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  const deadline = Date.now() + 10_000;
  let open = await openStoreFiles(gw.child.pid ?? 0);
  while (open.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    open = await openStoreFiles(gw.child.pid ?? 0);
  }
  expect(open).toEqual([]);
}

describe('result downloads (302 Location)', () => {
  it('curl -o downloads the zip, and the gateway keeps serving', async () => {
    for (let i = 0; i < 3; i++) {
      const location = await resultLocation();
      const { stdout } = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', location]);
      const [code, size] = stdout.split(' ');
      expect(code).toBe('200');
      expect(Number(size)).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 100)); // the crash came just after the client hung up
      await expectGatewayHealthy();
    }
  });

  it('fetch reads the whole zip, byte for byte what the function answered', async () => {
    const location = await resultLocation();
    const res = await fetch(location);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(Number(res.headers.get('content-length')));
    const [entry] = Object.values(unzipSync(bytes));
    const answer = JSON.parse(strFromU8(entry ?? strToU8('{}'))) as { outputs: { data: number[] }[] };
    expect(answer.outputs[0]?.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    await expectGatewayHealthy();
  });

  it('a raw socket that closes right after the body, or right after the headers', async () => {
    const whole = await rawRequest(await resultLocation(), 'body');
    expect(whole.head).toMatch(/^HTTP\/1\.1 200/);
    expect(whole.body).toBe(Number(/content-length: (\d+)/i.exec(whole.head)?.[1]));
    const headOnly = await rawRequest(await resultLocation(), 'headers');
    expect(headOnly.head).toMatch(/^HTTP\/1\.1 200/);
    await expectGatewayHealthy();
  });

  it('clients that drop a 24 MiB download mid-body: the file is closed, the gateway serves on', async () => {
    const size = 24 * 1024 * 1024;
    const dropped = await rawRequest(await bigResultLocation(size), { bytes: 64 * 1024 });
    expect(dropped.head).toMatch(/^HTTP\/1\.1 200/);
    expect(dropped.body).toBeLessThan(size);
    // curl giving up after 1 MiB (--max-filesize does not apply to a known length; a range of the
    // socket is what a killed download looks like): abort through a tiny speed limit and a timeout.
    const curl = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '--limit-rate',
      '512K',
      '--max-time',
      '1',
      '-w',
      '%{size_download}',
      await bigResultLocation(size),
    ]).catch((err: { code: number; stdout: string }) => err);
    expect('code' in curl ? curl.code : 0).toBe(28); // curl: operation timed out
    const fetched = await fetch(await bigResultLocation(size));
    const reader = fetched.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    await expectGatewayHealthy();
    // And the next whole download still works.
    const full = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code} %{size_download}',
      await bigResultLocation(size),
    ]);
    expect(full.stdout).toBe(`200 ${size}`);
    await expectGatewayHealthy();
  });
});

describe('server-sent events', () => {
  const streamArgs = (body: object) => [
    '-s',
    '-N',
    '-H',
    `Authorization: Bearer ${ADMIN_KEY}`,
    '-H',
    'Accept: text/event-stream',
    '-H',
    'content-type: application/json',
    '-d',
    JSON.stringify(body),
    `${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`,
  ];

  it('curl reads a stream to its end; sockets that hang up after the headers or the first event', async () => {
    const { stdout } = await run('curl', streamArgs({ prompt: 'H', max_tokens: 8 }));
    expect(stdout).toContain('data: [DONE]');
    const post = {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${ADMIN_KEY}`,
        Accept: 'text/event-stream',
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ prompt: 'H', max_tokens: 4096 }),
    };
    const url = `${gw.url}/v2/nvcf/pexec/functions/${fnId('generative')}`;
    const afterHeaders = await rawRequest(url, 'headers', post);
    expect(afterHeaders.head).toMatch(/^HTTP\/1\.1 200/);
    const afterEvent = await rawRequest(url, { bytes: 1 }, post);
    expect(afterEvent.head).toMatch(/text\/event-stream/i);
    await expectGatewayHealthy();
  });
});
