import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningGateway } from '@nvcf/gateway';
import { freePort } from '@nvcf/testing';
import { strFromU8, strToU8, unzipSync } from 'fflate';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, fnId, type Harness, pexec, simpleRequest } from './harness.ts';

// Gateway and worker share nothing but Redis and an S3-compatible service (s3rver: the S3 protocol over
// HTTP), as they would on different machines with MinIO.
let h: Harness;
let gw: RunningGateway;
let s3: S3rver;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-s3e2e-'));
  const port = await freePort();
  s3 = new S3rver({ port, address: '127.0.0.1', silent: true, directory: dir });
  await s3.run();
  const env = {
    OBJECT_STORE: 's3',
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_BUCKET: 'nvcf-e2e',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    ASSET_STORE_DIR: '/nonexistent-so-nothing-local-is-used',
  };
  h = await createHarness();
  await h.worker({ ...env, MAX_DIRECT_RESULT_BYTES: '64' });
  gw = await h.gateway(env);
});
afterAll(async () => {
  await h?.close();
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('S3-compatible object storage', () => {
  it('a large result the worker stored in S3 is served by the gateway through its signed URL', async () => {
    const res = await pexec(gw.url, `/v2/nvcf/pexec/functions/${fnId('simple')}`, simpleRequest());
    expect(res.status).toBe(302);
    const reqId = res.headers.get('nvcf-reqid') ?? '';
    const zipRes = await fetch(res.headers.get('location') ?? '');
    expect(zipRes.status).toBe(200);
    const zip = unzipSync(new Uint8Array(await zipRes.arrayBuffer()));
    const body = JSON.parse(strFromU8(zip[`${reqId}.response`] ?? strToU8('{}'))) as {
      outputs: { data: number[] }[];
    };
    expect(body.outputs[0]?.data[15]).toBe(16);
  });
});
