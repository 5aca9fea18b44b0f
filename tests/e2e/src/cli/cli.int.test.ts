/**
 * `nvcf` as a user runs it (its own process, pipes for stdout and stderr) against a real gateway, worker and Redis.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '@nvcf/cli/testing/cli-process';
import { bytesOf, npyFile } from '@nvcf/cli/testing/npy-file';
import { parseManifests, validateManifest } from '@nvcf/kubernetes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness, pexec, storeApiKey, verId } from '../harness.ts';

let h: Harness;
let worker: Awaited<ReturnType<Harness['worker']>>;
let env: Record<string, string>;
let dir: string;
const cli = (args: string[], extra: Record<string, string> = {}, input?: string) =>
  runCli(args, { ...env, ...extra }, input);

beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker();
  const gw = await h.gateway();
  env = { NVCF_BASE_URL: gw.url, NVCF_API_KEY: ADMIN_KEY };
  dir = await mkdtemp(join(tmpdir(), 'nvcf-cli-'));
});
afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const simple = fnId('simple');
const sums = Array.from({ length: 16 }, (_, i) => i + 1);
const diffs = Array.from({ length: 16 }, (_, i) => i - 1);
const simpleBody = JSON.stringify({
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
  ],
});
interface Outputs {
  model_name: string;
  outputs: { name: string; datatype: string; shape: number[]; data: number[] }[];
}
const output = (text: string, name: string) => (JSON.parse(text) as Outputs).outputs.find((o) => o.name === name);

/** A TCP port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('functions', () => {
  it('list: --json is the SDK’s FunctionDto array; without a terminal, one tab-separated line per version', async () => {
    const json = await cli(['functions', 'list', '--json']);
    expect(json.code).toBe(0);
    const list = JSON.parse(json.stdout) as { name: string; id: string; versionId: string; status: string }[];
    expect(list.find((f) => f.name === 'simple')).toMatchObject({ id: simple, versionId: verId('simple') });

    const plain = await cli(['functions', 'list']);
    expect(plain.code).toBe(0);
    expect(plain.stdout.split('\n')).toContain(
      `simple\t${simple}\t${verId('simple')}\t${list.find((f) => f.name === 'simple')?.status}`,
    );
    expect(plain.stderr).toBe('');
  });

  it('get: a function’s versions, or one version with its model’s inputs', async () => {
    const versions = await cli(['functions', 'get', simple]);
    expect(versions.stdout).toMatch(new RegExp(`^simple\t${simple}\t${verId('simple')}\t`));
    const one = await cli(['--json', 'functions', 'get', simple, '--version', verId('simple')]);
    expect(JSON.parse(one.stdout)).toMatchObject({
      id: simple,
      model: { inputs: [{ name: 'INPUT0' }, { name: 'INPUT1' }] },
    });
    // Global options are taken after the command too.
    const after = await cli(['functions', 'get', simple, '--version', verId('simple'), '--json']);
    // The same version, but for its worker's latest heartbeat, which may have come between the two reads.
    const beatless = (stdout: string) =>
      JSON.stringify(JSON.parse(stdout), (key, value: unknown) => (key === 'instanceUpdatedAt' ? undefined : value));
    expect(beatless(after.stdout)).toBe(beatless(one.stdout));
  });

  it('create registers a container function from flags', async () => {
    const created = await cli([
      'functions',
      'create',
      '--name',
      'cli-echo',
      '--container-image',
      'nvcf/echo-server:dev',
      '--container-args',
      'node server.ts',
      '--inference-url',
      '/echo',
      '--inference-port',
      '8000',
      '--health-uri',
      '/health',
      '--env',
      'GREETING=a=b',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const fn = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(fn).toMatchObject({
      status: 'INACTIVE',
      inferenceUrl: '/echo',
      inferencePort: 8000,
      healthUri: '/health',
      containerImage: 'nvcf/echo-server:dev',
      containerArgs: 'node server.ts',
      containerEnvironment: [{ key: 'GREETING', value: 'a=b' }],
    });
    expect(fn.model).toBeUndefined();
    const bad = await cli([
      'functions',
      'create',
      '--name',
      'x',
      '--container-image',
      'i',
      '--inference-url',
      '/x',
      '--env',
      'NOEQUALS',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--env takes KEY=VALUE/);
  });

  it('create, deploy, undeploy and delete a function from flags', async () => {
    const created = await cli(['functions', 'create', '--name', 'cli-made', '--model', 'simple/1', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const fn = JSON.parse(created.stdout) as { id: string; versionId: string; status: string; inferenceUrl: string };
    expect(fn).toMatchObject({ status: 'INACTIVE', inferenceUrl: '/v2/models/simple/infer' });

    const deployed = await cli([
      'deploy',
      fn.id,
      fn.versionId,
      '--min-instances',
      '0',
      '--max-instances',
      '2',
      '--json',
    ]);
    expect(deployed.code, deployed.stderr).toBe(0);
    expect(JSON.parse(deployed.stdout)).toMatchObject({
      functionId: fn.id,
      deploymentSpecifications: [{ gpu: 'CPU', instanceType: 'cpu.x1', minInstances: 0, maxInstances: 2 }],
    });
    const answer = await cli(['invoke', fn.id, '--data', simpleBody]);
    expect(output(answer.stdout, 'OUTPUT0')?.data).toEqual(sums);

    const again = await cli(['deploy', fn.id, fn.versionId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^nvcf: Bad Request: .*already deployed.*\(nvcf deploy --update\)/);

    const undeployed = await cli(['undeploy', fn.id, fn.versionId, '--json']);
    expect(JSON.parse(undeployed.stdout)).toMatchObject({ id: fn.id, status: 'INACTIVE' });
    const deleted = await cli(['functions', 'delete', fn.id, '--version', fn.versionId]);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted ${fn.id} version ${fn.versionId}\n` });
    expect((await cli(['functions', 'get', fn.id])).code).toBe(1);
  });

  it('create from --file, with flags over it', async () => {
    const spec = join(dir, 'spec.json');
    await writeFile(
      spec,
      JSON.stringify({
        name: 'from-file',
        inferenceUrl: '/v2/models/simple/infer',
        models: [{ name: 'simple', version: '1', uri: 'model-repository://simple/1' }],
        tags: ['a'],
      }),
    );
    const created = await cli(['functions', 'create', '--file', spec, '--tags', 'b,c', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const fn = JSON.parse(created.stdout) as { id: string; versionId: string; name: string; tags: string[] };
    expect(fn).toMatchObject({ name: 'from-file', tags: ['b', 'c'] });
    expect((await cli(['functions', 'delete', fn.id, '--version', fn.versionId])).code).toBe(0);
  });

  it('secrets: create --secret, secrets set (inline, @file, stdin) and clear; never a value printed', async () => {
    const created = await cli([
      'functions',
      'create',
      '--name',
      'cli-secrets',
      '--container-image',
      'nvcf/echo-server:dev',
      '--inference-url',
      '/echo',
      '--secret',
      'API_TOKEN=inline-hidden-1',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const fn = JSON.parse(created.stdout) as { id: string; versionId: string; secrets: string[] };
    expect(fn.secrets).toEqual(['API_TOKEN']);
    expect(created.stdout).not.toContain('hidden');

    const file = join(dir, 'token.txt');
    await writeFile(file, 'file-hidden-2\n');
    const set = await cli(
      ['functions', 'secrets', 'set', fn.id, fn.versionId, `API_TOKEN=@${file}`, 'OTHER=-'],
      {},
      'stdin-hidden-3\n',
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe(`set API_TOKEN, OTHER on ${fn.id} version ${fn.versionId}`);
    const read = await cli(['functions', 'get', fn.id, '--version', fn.versionId, '--json']);
    expect(JSON.parse(read.stdout).secrets).toEqual(['API_TOKEN', 'OTHER']);
    expect(read.stdout).not.toContain('hidden');

    const usage = await cli(['functions', 'secrets', 'set', fn.id, fn.versionId, 'NOEQUALS']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/NAME=VALUE/);
    const refused = await cli(['functions', 'secrets', 'set', fn.id, fn.versionId, 'bad-name=x']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/'name' must match/);

    const cleared = await cli(['functions', 'secrets', 'clear', fn.id, fn.versionId, '--json']);
    expect(JSON.parse(cleared.stdout)).toEqual({ functionId: fn.id, versionId: fn.versionId, secrets: [] });
    const after = await cli(['functions', 'get', fn.id, '--version', fn.versionId, '--json']);
    expect(JSON.parse(after.stdout).secrets).toEqual([]);
  });
});

describe('invoke', () => {
  it('--data (inline, @file, @- from stdin) prints the answer’s body as the function gave it', async () => {
    const inline = await cli(['invoke', simple, '--data', simpleBody]);
    expect(inline.code, inline.stderr).toBe(0);
    expect(output(inline.stdout, 'OUTPUT1')?.data).toEqual(diffs);
    expect(inline.stderr).toBe('');

    const file = join(dir, 'body.json');
    await writeFile(file, simpleBody);
    expect(output((await cli(['invoke', simple, '--data', `@${file}`])).stdout, 'OUTPUT0')?.data).toEqual(sums);
    expect(output((await cli(['invoke', simple, '--data', '@-'], {}, simpleBody)).stdout, 'OUTPUT0')?.data).toEqual(
      sums,
    );
  });

  it('--out writes the answer to a file and nothing to stdout; --json wraps it with the request id', async () => {
    const out = join(dir, 'answer.json');
    const written = await cli(['invoke', simple, '--data', simpleBody, '--out', out]);
    expect(written).toMatchObject({ code: 0, stdout: '' });
    expect(output(await readFile(out, 'utf8'), 'OUTPUT0')?.data).toEqual(sums);

    const json = await cli(['invoke', simple, '--data', simpleBody, '--json']);
    const envelope = JSON.parse(json.stdout) as { requestId: string; status: number; body: Outputs };
    expect(envelope).toMatchObject({ status: 200, contentType: expect.stringMatching(/json/) });
    expect(envelope.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(envelope.body.outputs[0]?.data).toEqual(sums);
  });

  it('--input NAME=@file.npy sends the arrays as KServe tensors and prints the outputs as KServe JSON', async () => {
    const a = join(dir, 'INPUT0.npy');
    const b = join(dir, 'INPUT1.npy');
    await writeFile(a, npyFile('<i4', [1, 16], bytesOf(Int32Array.from({ length: 16 }, (_, i) => i))));
    await writeFile(b, npyFile('<i4', [1, 16], bytesOf(new Int32Array(16).fill(1)), { version: 2 }));
    const res = await cli(['invoke', simple, '--input', `INPUT0=@${a}`, '--input', `INPUT1=@${b}`]);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      model_name: 'simple',
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: sums },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: diffs },
      ],
    });

    // A JSON array takes its datatype from the model, its shape from the nesting; --out writes the same JSON.
    const out = join(dir, 'tensors.json');
    const mixed = await cli([
      'invoke',
      simple,
      '--input',
      `INPUT0=@${a}`,
      '--input',
      `INPUT1=[${JSON.stringify(Array(16).fill(2))}]`,
      '--out',
      out,
    ]);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(output(await readFile(out, 'utf8'), 'OUTPUT0')?.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 2));

    // A tensor the model refuses is the model's 400: exit 1, the problem on stderr with the request id.
    const f8 = join(dir, 'wrong.npy');
    await writeFile(f8, npyFile('<f8', [1, 16], bytesOf(new Float64Array(16))));
    const refused = await cli(['invoke', simple, '--input', `INPUT0=@${f8}`, '--input', `INPUT1=@${b}`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^nvcf: Bad Request: .*FP64.*\(request [0-9a-f-]{36}\)\n$/);
    // A file that is not .npy never reaches the gateway.
    const bad = await cli(['invoke', simple, '--input', `INPUT0=@${join(dir, 'body.json')}`]);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toMatch(/not a NumPy \.npy file/);
  });

  it('--stream prints an OpenAI-style stream’s text as it comes, other events one data line each', async () => {
    const text = await cli(['invoke', fnId('generative'), '--stream', '--data', '{"prompt":"H","max_tokens":5}']);
    expect(text).toMatchObject({ code: 0, stdout: 'i,NVC\n' });
    const chat = await cli([
      'invoke',
      fnId('generative'),
      '--stream',
      '--data',
      '{"messages":[{"role":"user","content":"H"}],"max_tokens":5}',
    ]);
    expect(chat.stdout).toBe('i,NVC\n');
    const events = await cli([
      'invoke',
      fnId('generative'),
      '--stream',
      '--json',
      '--data',
      '{"prompt":"H","max_tokens":2}',
    ]);
    const lines = events.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { data: string; id?: string });
    expect(lines.at(-1)?.data).toBe('[DONE]');
    expect(lines.every((e) => e.id !== undefined)).toBe(true);
    const once = await cli(['invoke', simple, '--stream', '--data', simpleBody]);
    expect(once.stdout.trim().split('\n')).toHaveLength(1);
    expect(output(once.stdout, 'OUTPUT0')?.data).toEqual(sums);
  });
});

describe('large results (over the gateway’s direct limit: a 302 to a zip)', () => {
  it('invoke prints the response from the zip; status --out saves the zip of one that waited', async () => {
    await worker.close();
    const pending = await pexec(env.NVCF_BASE_URL ?? '', `/v2/nvcf/pexec/functions/${simple}`, JSON.parse(simpleBody), {
      'nvcf-poll-seconds': '1',
    });
    expect(pending.status).toBe(202);
    const requestId = pending.headers.get('nvcf-reqid') ?? '';
    worker = await h.worker({ MAX_DIRECT_RESULT_BYTES: '64' });
    const zip = join(dir, 'result.zip');
    const saved = await cli(['status', requestId, '--poll-seconds', '30', '--out', zip]);
    expect(saved).toMatchObject({ code: 0, stdout: '' });
    expect((await readFile(zip)).subarray(0, 2).toString()).toBe('PK');

    const answer = await cli(['invoke', simple, '--data', simpleBody]);
    expect(answer.code, answer.stderr).toBe(0);
    expect(output(answer.stdout, 'OUTPUT0')?.data).toEqual(sums);
    await worker.close();
    worker = await h.worker();
  });
});

describe('assets', () => {
  it('upload, list, get, delete', async () => {
    const file = join(dir, 'input.bin');
    await writeFile(file, bytesOf(new Int32Array([1, 2, 3, 4])));
    const up = await cli(['assets', 'upload', file, '--description', 'four ints', '--json']);
    expect(up.code, up.stderr).toBe(0);
    const asset = JSON.parse(up.stdout) as { assetId: string; uploadUrl?: string };
    expect(asset).toMatchObject({ contentType: 'application/octet-stream', description: 'four ints', bytes: 16 });
    expect(asset.uploadUrl).toBeUndefined();

    const list = await cli(['assets', 'list']);
    expect(list.stdout.split('\n')).toContain(`${asset.assetId}\tapplication/octet-stream\tfour ints`);
    const got = await cli(['assets', 'get', asset.assetId, '--json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ assetId: asset.assetId, createdAt: expect.any(String) });
    expect(await cli(['assets', 'delete', asset.assetId])).toMatchObject({
      code: 0,
      stdout: `deleted asset ${asset.assetId}\n`,
    });
    const gone = await cli(['assets', 'get', asset.assetId]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^nvcf: Not Found: /);
  });
});

describe('queue', () => {
  it('depth per version; the position of a request that is not queued is a 404', async () => {
    const depth = await cli(['queue', simple, '--json']);
    expect(depth.code, depth.stderr).toBe(0);
    expect(JSON.parse(depth.stdout)).toMatchObject({
      functionId: simple,
      queues: [{ functionVersionId: verId('simple'), functionName: 'simple', queueDepth: expect.any(Number) }],
    });
    expect((await cli(['queue', simple, '--version', verId('simple')])).stdout).toMatch(/^simple\t/);
    const position = await cli(['queue', 'position', crypto.randomUUID()]);
    expect(position.code).toBe(1);
    expect(position.stderr).toMatch(/^nvcf: Not Found: /);
  });
});

describe('cluster-groups', () => {
  it('lists the live worker’s pool with the GPU and instance type it reports', async () => {
    const listed = await cli(['cluster-groups']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n')).toContain('default\tCPU\tcpu.x1\tyes');
    const json = await cli(['cluster-groups', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ clusterGroups: [{ name: 'default', gpus: [{ name: 'CPU' }] }] });
  });
});

describe('kube worker-pool', () => {
  type Doc = { kind: string; metadata: { name: string; namespace?: string }; spec?: Record<string, unknown> };
  it('a container function’s pool runs its server beside the worker, told its address', async () => {
    const args = ['--container-image', 'nvcf/echo-server:dev', '--inference-url', '/echo', '--health-uri', '/health'];
    const created = await cli([
      'functions',
      'create',
      '--name',
      'pooled-echo',
      ...args,
      '--inference-port',
      '9000',
      '--json',
    ]);
    const fn = JSON.parse(created.stdout) as { id: string; versionId: string };
    expect((await cli(['deploy', fn.id, fn.versionId, '--min-instances', '0', '--max-instances', '1'])).code).toBe(0);
    const res = await cli(['kube', 'worker-pool', '--function', fn.id]);
    expect(res.code, res.stderr).toBe(0);
    const deployment = (parseManifests(res.stdout) as Doc[]).find((d) => d.kind === 'Deployment');
    const spec = JSON.stringify(deployment?.spec);
    expect(spec).toContain('{"name":"WORKER_CONTAINER_URL","value":"http://127.0.0.1:9000"}');
    expect(spec).toContain('"name":"inference","image":"nvcf/echo-server:dev"');
    expect(spec).toContain('"readinessProbe":{"httpGet":{"path":"/health","port":9000}');
  });

  it('a pool per deployed version: minInstances/maxInstances become the ScaledObject’s; valid Kubernetes and KEDA', async () => {
    const created = await cli(['functions', 'create', '--name', 'pooled', '--model', 'simple/1', '--json']);
    const fn = JSON.parse(created.stdout) as { id: string; versionId: string };
    const deploy = ['deploy', fn.id, fn.versionId, '--gpu', 'L40S', '--instance-type', 'gpu.x1'];
    const limits = ['--min-instances', '0', '--max-instances', '3', '--max-request-concurrency', '2'];
    expect((await cli([...deploy, ...limits])).code).toBe(0);

    const res = await cli(['kube', 'worker-pool', '--function', fn.id, '--namespace', 'inference']);
    expect(res.code, res.stderr).toBe(0);
    // Every document checked against its schema (kubernetes-models, @kubernetes-models/keda).
    const docs = parseManifests(res.stdout) as Doc[];
    expect(docs.map((d) => d.kind)).toEqual(['TriggerAuthentication', 'Deployment', 'ScaledObject']);
    expect(docs.every((d) => d.metadata.namespace === 'inference')).toBe(true);
    const [, deployment, scaler] = docs;
    expect(JSON.stringify(deployment?.spec)).toContain(`{"name":"WORKER_FUNCTION_VERSIONS","value":"${fn.versionId}"}`);
    expect(JSON.stringify(deployment?.spec)).toContain('"nvidia.com/gpu":"1"');
    expect(scaler?.spec).toMatchObject({
      scaleTargetRef: { name: deployment?.metadata.name },
      minReplicaCount: 0,
      maxReplicaCount: 3,
      triggers: [
        {
          type: 'metrics-api',
          metadata: {
            url: `http://gateway.inference.svc.cluster.local:8080/v2/nvcf/queues/functions/${fn.id}/versions/${fn.versionId}`,
            valueLocation: 'queues.0.queueDepth',
            targetValue: '2',
          },
        },
      ],
    });

    // --json: a List kubectl applies as well.
    const asJson = await cli(['kube', 'worker-pool', '--function', fn.id, '--version', fn.versionId, '--json']);
    const list = JSON.parse(asJson.stdout) as { kind: string; items: unknown[] };
    expect(list.kind).toBe('List');
    expect(list.items.map((i) => validateManifest(i).kind)).toEqual(docs.map((d) => d.kind));

    const badUrl = await cli(['kube', 'worker-pool', '--function', fn.id, '--gateway-url', 'gateway:8080']);
    expect(badUrl.code).toBe(2);
    expect((await cli(['undeploy', fn.id, fn.versionId])).code).toBe(0);
    const none = await cli(['kube', 'worker-pool', '--function', fn.id]);
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toMatch(/^nvcf: function .* has no deployed version/);
    const undeployed = await cli(['kube', 'worker-pool', '--function', fn.id, '--version', fn.versionId]);
    expect(undeployed).toMatchObject({ code: 1, stdout: '' });
    expect(undeployed.stderr).toMatch(/^nvcf: version .* of function .* is not deployed/);
    expect((await cli(['functions', 'delete', fn.id, '--version', fn.versionId])).code).toBe(0);
  });
});

describe('exit codes and help', () => {
  it('1 for a refusal (404), 2 for bad usage, 3 when the gateway cannot be reached', async () => {
    const unknown = crypto.randomUUID();
    const notFound = await cli(['functions', 'get', unknown]);
    expect(notFound).toMatchObject({ code: 1, stdout: '' });
    expect(notFound.stderr).toBe(`nvcf: Not Found: Function '${unknown}' not found\n`);

    for (const args of [
      ['invoke', simple],
      ['invoke', simple, '--data', '{not json'],
      ['invoke', simple, '--poll-seconds', '0', '--data', '{}'],
      ['functions', 'delete', simple],
      ['functions', 'nope'],
      ['--no-such-option'],
      ['invoke', simple, '--input', 'INPUT0'],
    ]) {
      const res = await cli(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stdout, args.join(' ')).toBe('');
      expect(res.stderr.length, args.join(' ')).toBeGreaterThan(0);
    }

    const down = await cli(['functions', 'list'], { NVCF_BASE_URL: `http://127.0.0.1:${await closedPort()}` });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/^nvcf: cannot reach the gateway: .*ECONNREFUSED/);

    const unauthorized = await cli(['functions', 'list'], { NVCF_API_KEY: 'nvapi-not-a-key' });
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toMatch(/^nvcf: Unauthorized/);
  });

  it('--help on the program (with exit codes and configuration) and on commands', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Usage: nvcf/);
    expect(top.stdout).toMatch(/Exit codes:[\s\S]*130/);
    expect(top.stdout).toMatch(/NVCF_BASE_URL/);
    for (const [args, usage] of [
      [['invoke', '--help'], /Usage: nvcf invoke \[options\] <functionId>[\s\S]*--input/],
      [['functions', 'create', '--help'], /Usage: nvcf functions create[\s\S]*--model/],
      [['assets', '--help'], /upload[\s\S]*delete/],
      [['help', 'deploy'], /Usage: nvcf deploy[\s\S]*--min-instances/],
      [['keys', 'create', '--help'], /--scopes[\s\S]*--nca-id/],
      [['functions', 'share', '--help'], /--nca-id[\s\S]*--version/],
      [['queue', '--help'], /position/],
      [['kube', 'worker-pool', '--help'], /--function[\s\S]*--gateway-url/],
    ] as const) {
      const res = await cli([...args]);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout, args.join(' ')).toMatch(usage);
    }
  });

  it('takes the gateway and key from a profile when neither flag nor environment gives them', async () => {
    const config = join(dir, 'config.json');
    const noEnv = { NVCF_BASE_URL: '', NVCF_API_KEY: '', NVCF_CONFIG: config };
    expect((await cli(['config', 'set', 'base-url', env.NVCF_BASE_URL ?? ''], noEnv)).code).toBe(0);
    expect((await cli(['config', 'set', 'api-key', ADMIN_KEY], noEnv)).code).toBe(0);
    expect((await cli(['functions', 'list'], noEnv)).stdout).toMatch(/^simple\t/m);
    const shown = JSON.parse((await cli(['config', 'show', '--json'], noEnv)).stdout) as Record<string, string>;
    expect(shown).toMatchObject({ profile: 'default', baseUrlFrom: 'profile', apiKeyFrom: 'profile' });
    expect(JSON.stringify(shown)).not.toContain(ADMIN_KEY);
    // A flag beats the profile.
    const flagged = await cli(['functions', 'list', '--api-key', 'nvapi-not-a-key'], noEnv);
    expect(flagged.code).toBe(1);
    expect((await cli(['functions', 'list', '--profile', 'nope'], noEnv)).code).toBe(2);
  });
});

describe('keys', () => {
  it('create (the secret once), list, revoke: the new key works until it is revoked', async () => {
    const created = await cli(['keys', 'create', '--name', 'cli-ci', '--scopes', 'list_functions', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { key, value } = JSON.parse(created.stdout) as { key: { id: string; scopes: string[] }; value: string };
    expect(key.scopes).toEqual(['list_functions']);
    expect(value).toMatch(/^nvapi-/);

    const listed = await cli(['keys', 'list', '--json']);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((k) => k.id)).toContain(key.id);
    expect((await cli(['keys', 'list'])).stdout).toMatch(
      new RegExp(`^${key.id}\tcli-ci\tactive\tlist_functions\t`, 'm'),
    );

    expect((await cli(['functions', 'list'], { NVCF_API_KEY: value })).code).toBe(0);
    // Its scope is all it has: invoking is a 403.
    const forbidden = await cli(['invoke', simple, '--data', simpleBody], { NVCF_API_KEY: value });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^nvcf: Forbidden/);

    expect(await cli(['keys', 'revoke', key.id])).toMatchObject({ code: 0, stdout: `revoked ${key.id}\n` });
    // A gateway trusts a verified key for AUTH_CACHE_MS (2 s): the revocation takes effect within it.
    const deadline = Date.now() + 15_000;
    let code: number | null = 0;
    while (code === 0 && Date.now() < deadline) code = (await cli(['functions', 'list'], { NVCF_API_KEY: value })).code;
    expect(code).toBe(1);
    expect((await cli(['keys', 'list'])).stdout).toMatch(new RegExp(`^${key.id}\tcli-ci\trevoked `, 'm'));
    expect((await cli(['keys', 'create', '--name', 'x'])).code).toBe(2);
  });

  it('list prints a name stored before names were checked escaped, never its terminal sequence', async () => {
    // What another account named its key when the gateway still took it: a window-title change and a screen clear.
    const name = '\x1b]0;pwned\x07old\x1b[2J\u202ekey';
    await storeApiKey(h, { name, scopes: ['list_functions'] });
    const listed = await cli(['keys', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    for (const raw of ['\x1b', '\x07', '\u202e']) expect(listed.stdout).not.toContain(raw);
    expect(listed.stdout).toMatch(/^\S+\t\\x1b\]0;pwned\\x07old\\x1b\[2J\\u\{202e\}key\tactive\t/m);
    // --json is for scripts: the name as stored, JSON-escaped.
    const json = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as { name: string }[];
    expect(json.map((k) => k.name)).toContain(name);
  });
});

describe('sharing a function with another account', () => {
  it('keys create --nca-id, functions share / authorizations / list --visibility / unshare', async () => {
    const made = await cli([
      'keys',
      'create',
      '--name',
      'cli-b',
      '--scopes',
      'list_functions',
      '--nca-id',
      'cli-b',
      '--json',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const { key, value } = JSON.parse(made.stdout) as { key: { ncaId: string }; value: string };
    expect(key.ncaId).toBe('cli-b');
    const asB = { NVCF_API_KEY: value };
    expect((await cli(['functions', 'list', '--visibility', 'authorized'], asB)).stdout).toBe('');

    expect(await cli(['functions', 'share', simple, '--nca-id', 'cli-b'])).toMatchObject({
      code: 0,
      stdout: `shared ${simple} with cli-b\n`,
    });
    expect((await cli(['functions', 'authorizations', simple])).stdout).toBe(
      `${simple}\t${verId('simple')}\tself-hosted\tcli-b\n`,
    );
    const shared = await cli(['functions', 'list', '--visibility', 'authorized'], asB);
    expect(shared.stdout).toMatch(new RegExp(`^simple\t${simple}\t${verId('simple')}\t`));
    // Sharing is the owner's: the other account is refused (403), and a bad visibility is the gateway's 400.
    const refused = await cli(['functions', 'share', simple, '--nca-id', 'cli-c'], asB);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^nvcf: Forbidden/);
    expect((await cli(['functions', 'list', '--visibility', 'everything'])).code).toBe(1);

    expect(await cli(['functions', 'unshare', simple, '--nca-id', 'cli-b', '--json'])).toMatchObject({ code: 0 });
    expect((await cli(['functions', 'list', '--visibility', 'authorized'], asB)).stdout).toBe('');
  });
});
