import { describe, expect, it } from 'vitest';
import { loadWorkerConfig, WorkerEnv } from './config.ts';
import { parseServerUser, processModeProblem } from './container/server-user.ts';

describe('worker config', () => {
  it('defaults to cuda then cpu, one ORT thread each, and a 30 s drain', () => {
    const c = loadWorkerConfig({});
    expect(c.executionProviders).toEqual(['cuda', 'cpu']);
    expect(c).toMatchObject({
      intraOpThreads: 1,
      interOpThreads: 1,
      shutdownTimeoutMs: 30_000,
      concurrency: 0,
      cpuInstances: 0,
    });
    expect(c.workerId).toMatch(/^worker-/);
  });

  it('counts Buffers in V8’s heap limit unless told not to (the process applies it at start-up)', () => {
    expect(WorkerEnv.parse({}).GC_EXTERNAL_MEMORY_IN_HEAP_LIMIT).toBe(true);
    expect(WorkerEnv.parse({ GC_EXTERNAL_MEMORY_IN_HEAP_LIMIT: 'false' }).GC_EXTERNAL_MEMORY_IN_HEAP_LIMIT).toBe(false);
  });

  it('keeps the inference server’s surfaces closed by default, and parses their settings', () => {
    const c = loadWorkerConfig({});
    expect(c).toMatchObject({
      modelControl: 'none',
      exposeFunctionModels: false,
      grpcMaxReceiveBytes: 64 * 1024 * 1024,
    });
    expect(c.restrictedApis.size).toBe(0);
    const set = loadWorkerConfig({
      WORKER_MODEL_CONTROL_MODE: 'explicit',
      WORKER_EXPOSE_FUNCTION_MODELS: 'true',
      WORKER_GRPC_MAX_RECEIVE_BYTES: '1048576',
      WORKER_RESTRICTED_API: 'model-repository,model-config:x-nvcf-worker-key=s',
    });
    expect(set).toMatchObject({ modelControl: 'explicit', exposeFunctionModels: true, grpcMaxReceiveBytes: 1048576 });
    expect(set.restrictedApis.get('model-config')).toEqual({ header: 'x-nvcf-worker-key', value: 's' });
    expect(() =>
      loadWorkerConfig({ WORKER_MODEL_CONTROL_MODE: 'poll', WORKER_RESTRICTED_API: 'everything:k=v' }),
    ).toThrow(/WORKER_MODEL_CONTROL_MODE[\s\S]*WORKER_RESTRICTED_API[\s\S]*unknown API 'everything'/);
  });

  it('reports its machine: pool, GPU and instance type, CPU in the default pool by default', () => {
    expect(loadWorkerConfig({}).machine).toEqual({ pool: 'default', gpu: 'CPU', instanceType: 'cpu.x1' });
    expect(loadWorkerConfig({ WORKER_POOL: 'gpu-pool', WORKER_GPU: 'H100' }).machine).toEqual({
      pool: 'gpu-pool',
      gpu: 'H100',
      instanceType: 'h100.x1',
    });
    expect(loadWorkerConfig({ WORKER_GPU: 'L40S', WORKER_INSTANCE_TYPE: 'gl40s.2x' }).machine.instanceType).toBe(
      'gl40s.2x',
    );
  });

  it('serves every version unless WORKER_FUNCTION_VERSIONS lists some; a malformed id is refused', () => {
    expect(loadWorkerConfig({}).functionVersionIds).toEqual([]);
    const a = '0b6e1a8e-4a51-4c2a-9d0c-1f2e3d4c5b6a';
    const b = 'F0E1D2C3-B4A5-4697-8877-665544332211';
    expect(loadWorkerConfig({ WORKER_FUNCTION_VERSIONS: ` ${a} ,${b},` }).functionVersionIds).toEqual([
      a,
      b.toLowerCase(),
    ]);
    expect(() => loadWorkerConfig({ WORKER_FUNCTION_VERSIONS: `${a},simple` })).toThrow(
      /WORKER_FUNCTION_VERSIONS[\s\S]*'simple' is not a function version id/,
    );
  });

  it('parses provider lists and refuses bad numbers', () => {
    expect(loadWorkerConfig({ ORT_EXECUTION_PROVIDERS: ' CPU ' }).executionProviders).toEqual(['cpu']);
    expect(() => loadWorkerConfig({ WORKER_CONCURRENCY: '-1', HEARTBEAT_INTERVAL_MS: 'soon' })).toThrow(
      /WORKER_CONCURRENCY[\s\S]*HEARTBEAT_INTERVAL_MS/,
    );
  });

  it('serves no container function unless told how; a sidecar address must be an http URL', () => {
    expect(loadWorkerConfig({}).container).toMatchObject({ url: '', processes: false, timeoutMs: 600_000 });
    expect(loadWorkerConfig({}).container.workDir).toMatch(/nvcf-worker$/);
    const version = '0b6e1a8e-4a51-4c2a-9d0c-1f2e3d4c5b6a';
    const sidecar = loadWorkerConfig({
      WORKER_CONTAINER_URL: 'http://127.0.0.1:8000',
      WORKER_FUNCTION_VERSIONS: version,
      WORKER_CONTAINER_WORK_DIR: '/var/inf',
      WORKER_CONTAINER_PROCESSES: 'true',
    });
    expect(sidecar.container).toMatchObject({ url: 'http://127.0.0.1:8000', workDir: '/var/inf', processes: true });
    expect(() => loadWorkerConfig({ WORKER_CONTAINER_URL: 'http://127.0.0.1:8000' })).toThrow(
      /WORKER_CONTAINER_URL needs WORKER_FUNCTION_VERSIONS/,
    );
    expect(() => loadWorkerConfig({ WORKER_CONTAINER_URL: 'https://inference:8000' })).toThrow(/WORKER_CONTAINER_URL/);
    expect(() => loadWorkerConfig({ WORKER_CONTAINER_URL: 'inference:8000' })).toThrow(/WORKER_CONTAINER_URL/);
  });

  it("process mode: a root worker needs a user of the servers' own, never root; names and uid:gid both read", () => {
    expect(processModeProblem(true, undefined, 0)).toMatch(/process mode needs WORKER_CONTAINER_USER/);
    expect(processModeProblem(true, { uid: 65534, gid: 65534 }, 0)).toBeUndefined();
    expect(processModeProblem(true, undefined, 1000)).toBeUndefined();
    expect(processModeProblem(true, { uid: 65534, gid: 65534 }, 1000)).toMatch(/cannot run its servers as uid 65534/);
    expect(processModeProblem(false, undefined, 0)).toBeUndefined();
    const passwd = () =>
      'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n';
    expect(parseServerUser('nobody', passwd)).toEqual({ uid: 65534, gid: 65534 });
    expect(parseServerUser('1001:1002', passwd)).toEqual({ uid: 1001, gid: 1002 });
    expect(parseServerUser('1001', passwd)).toEqual({ uid: 1001, gid: 1001 });
    expect(() => parseServerUser('root', passwd)).toThrow(/must not run as root/);
    expect(() => parseServerUser('0:65534', passwd)).toThrow(/must not run as root/);
    expect(() => parseServerUser('ghost', passwd)).toThrow(/no user 'ghost'/);
    expect(loadWorkerConfig({ WORKER_CONTAINER_USER: '65534:65534' }).container).toMatchObject({
      user: { uid: 65534, gid: 65534 },
      sandbox: 'auto',
    });
    expect(() => loadWorkerConfig({ WORKER_CONTAINER_SANDBOX: 'docker' })).toThrow(/WORKER_CONTAINER_SANDBOX/);
    if (process.getuid?.() === 0) {
      expect(() => loadWorkerConfig({ WORKER_CONTAINER_PROCESSES: 'true' })).toThrow(/WORKER_CONTAINER_USER/);
    }
  });

  it('leaves tracing off unless an OTLP endpoint is set; names its spans nvcf-worker', () => {
    expect(loadWorkerConfig({}).tracing).toEqual({ endpoint: '', serviceName: 'nvcf-worker', scheduleDelayMs: 5000 });
    expect(loadWorkerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318/' }).tracing.endpoint).toBe(
      'https://otel.example:4318/',
    );
  });

  it('reads the secrets key; a secrets directory is for one sidecar version only', () => {
    expect(loadWorkerConfig({}).secrets).toEqual({});
    const key = Buffer.alloc(32, 9);
    expect(loadWorkerConfig({ NVCF_SECRETS_KEY: key.toString('base64') }).secrets).toEqual({ key });
    expect(() => loadWorkerConfig({ NVCF_SECRETS_KEY: 'x'.repeat(32) })).toThrow(/NVCF_SECRETS_KEY/);
    const version = '0b6e1a8e-4a51-4c2a-9d0c-1f2e3d4c5b6a';
    const sidecar = { WORKER_CONTAINER_URL: 'http://127.0.0.1:8000', WORKER_FUNCTION_VERSIONS: version };
    expect(loadWorkerConfig({ ...sidecar, WORKER_SECRETS_DIR: '/var/secrets' }).container.secretsDir).toBe(
      '/var/secrets',
    );
    expect(loadWorkerConfig({}).container.secretsDir).toBe('');
    for (const env of [
      { WORKER_SECRETS_DIR: '/var/secrets' },
      { ...sidecar, WORKER_FUNCTION_VERSIONS: `${version},${version.replace('0b', '1b')}`, WORKER_SECRETS_DIR: '/s' },
    ]) {
      expect(() => loadWorkerConfig(env)).toThrow(/WORKER_SECRETS_DIR: is for sidecar mode/);
    }
  });
});
