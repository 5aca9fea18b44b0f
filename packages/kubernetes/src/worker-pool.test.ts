import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseManifests, validateManifest } from './manifest-models.ts';
import { poolScaling, workerPool, workerPoolsYaml } from './worker-pool.ts';
import {
  EXAMPLE_CONTAINER_POOL,
  EXAMPLE_CONTAINER_POOL_FILE,
  EXAMPLE_POOL,
  EXAMPLE_POOL_FILE,
} from './worker-pool-example.ts';

const functionId = '0b6e1a8e-4a51-4c2a-9d0c-1f2e3d4c5b6a';
const versionId = 'f0e1d2c3-b4a5-4697-8877-665544332211';

type Container = {
  name: string;
  env: { name: string; value?: string }[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  image: string;
  ports?: { name: string; containerPort: number }[];
  readinessProbe?: { httpGet: { path: string; port: number | string } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
type Doc = ReturnType<typeof parseManifests>[number] & {
  spec: {
    minReplicaCount?: number;
    maxReplicaCount?: number;
    scaleTargetRef?: { name: string };
    triggers?: { type: string; metadata: Record<string, string>; authenticationRef: { name: string } }[];
    template?: { spec: { containers: Container[]; volumes?: { name: string; emptyDir: Record<string, string> }[] } };
    secretTargetRef?: { parameter: string; name: string; key: string }[];
  };
};
const docs = (yaml: string) => parseManifests(yaml) as Doc[];
const byKind = (all: Doc[], kind: string) => all.filter((d) => d.kind === kind);

describe('deploymentSpecifications → a worker pool', () => {
  it('sums minInstances and maxInstances as the gateway does; GPU unless every specification is CPU', () => {
    expect(
      poolScaling([
        { gpu: 'CPU', minInstances: 0, maxInstances: 2, maxRequestConcurrency: 4 },
        { gpu: 'cpu', minInstances: 1, maxInstances: 3 },
      ]),
    ).toEqual({ gpu: false, minReplicas: 1, maxReplicas: 5, pendingPerReplica: 4 });
    expect(poolScaling([{ gpu: 'H100', minInstances: 0, maxInstances: 1 }])).toMatchObject({
      gpu: true,
      pendingPerReplica: 1,
    });
    // A repository model's function is deployed with no specifications: 0 to 1, as the registry records it.
    expect(poolScaling([])).toEqual({ gpu: false, minReplicas: 0, maxReplicas: 1, pendingPerReplica: 1 });
  });

  it('a Deployment serving only that version and a ScaledObject on its queueDepth, from 0', () => {
    const all = docs(
      workerPoolsYaml([
        {
          functionId,
          versionId,
          functionName: 'echo',
          specifications: [{ gpu: 'A100', minInstances: 0, maxInstances: 3, maxRequestConcurrency: 2 }],
          namespace: 'inference',
          gpuImage: 'registry.example/nvcf/worker-gpu:1',
        },
      ]),
    );
    expect(all.map((d) => d.kind)).toEqual(['TriggerAuthentication', 'Deployment', 'ScaledObject']);
    for (const d of all) expect(d.metadata.namespace).toBe('inference');

    const [deployment] = byKind(all, 'Deployment');
    const container = deployment?.spec.template?.spec.containers[0];
    expect(container?.image).toBe('registry.example/nvcf/worker-gpu:1');
    expect(container?.env).toContainEqual({ name: 'WORKER_FUNCTION_VERSIONS', value: versionId });
    expect(container?.env).toContainEqual({ name: 'ORT_EXECUTION_PROVIDERS', value: 'cuda,cpu' });
    expect(container?.resources.requests['nvidia.com/gpu']).toBe('1');
    expect(container?.resources.limits['nvidia.com/gpu']).toBe('1');

    const [scaler] = byKind(all, 'ScaledObject');
    expect(scaler?.spec).toMatchObject({
      scaleTargetRef: { name: deployment?.metadata.name },
      minReplicaCount: 0,
      maxReplicaCount: 3,
    });
    expect(scaler?.spec.triggers).toEqual([
      {
        type: 'metrics-api',
        metricType: 'AverageValue',
        metadata: {
          url: `http://gateway.inference.svc.cluster.local:8080/v2/nvcf/queues/functions/${functionId}/versions/${versionId}`,
          valueLocation: 'queues.0.queueDepth',
          targetValue: '2',
          activationTargetValue: '0',
          authMode: 'bearer',
        },
        authenticationRef: { name: 'nvcf-queue-reader' },
      },
    ]);
    const [auth] = byKind(all, 'TriggerAuthentication');
    expect(auth?.metadata.name).toBe('nvcf-queue-reader');
    // KEDA's metrics-api scaler sends `Authorization: Bearer <token>` from the parameter named token (keda.sh).
    expect(auth?.spec.secretTargetRef).toEqual([{ parameter: 'token', name: 'nvcf-keda-scaler', key: 'token' }]);
  });

  it('a CPU version gets the CPU image, no GPU; several versions share one TriggerAuthentication', () => {
    const cpu = { gpu: 'CPU', minInstances: 1, maxInstances: 1 };
    const other = '11111111-2222-4333-8444-555555555555';
    const all = docs(
      workerPoolsYaml([
        { functionId, versionId, functionName: 'a', specifications: [cpu] },
        { functionId, versionId: other, functionName: 'b', specifications: [cpu] },
      ]),
    );
    expect(all.map((d) => d.kind)).toEqual([
      'TriggerAuthentication',
      'Deployment',
      'ScaledObject',
      'Deployment',
      'ScaledObject',
    ]);
    const [first] = byKind(all, 'Deployment');
    const container = first?.spec.template?.spec.containers[0];
    expect(container?.image).toBe('nvcf/worker:0.1.0');
    expect(container?.resources.requests).not.toHaveProperty('nvidia.com/gpu');
    expect(byKind(all, 'ScaledObject').map((s) => s.spec.minReplicaCount)).toEqual([1, 1]);
  });

  it('deploy/kubernetes/examples/worker-pool.yaml is what the builder prints for the example version', async () => {
    const expected = workerPoolsYaml([EXAMPLE_POOL]);
    // After changing the builders: pnpm --filter @nvcf/kubernetes example
    expect(await readFile(EXAMPLE_POOL_FILE, 'utf8')).toBe(expected);
    expect(byKind(docs(expected), 'ScaledObject')[0]?.spec.minReplicaCount).toBe(0);
  });
});

describe('a container function → sidecar pods', () => {
  it('runs the inference container beside the worker, which is told its address and shares the work dir', async () => {
    const expected = workerPoolsYaml([EXAMPLE_CONTAINER_POOL]);
    // After changing the builders: pnpm --filter @nvcf/kubernetes example
    expect(await readFile(EXAMPLE_CONTAINER_POOL_FILE, 'utf8')).toBe(expected);
    const all = docs(expected);
    for (const d of all) validateManifest(d);
    const [deployment] = byKind(all, 'Deployment');
    const pod = deployment?.spec.template?.spec ?? { containers: [] };
    const [worker, inference] = pod.containers;
    expect(pod.containers.map((c) => c.name)).toEqual(['worker', 'inference']);
    const env = Object.fromEntries((worker?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      WORKER_CONTAINER_URL: 'http://127.0.0.1:8000',
      WORKER_CONTAINER_WORK_DIR: '/var/inf',
      WORKER_SECRETS_DIR: '/var/secrets',
      WORKER_FUNCTION_VERSIONS: EXAMPLE_CONTAINER_POOL.versionId,
      KSERVE_HTTP_PORT: '8010',
      KSERVE_GRPC_PORT: '-1',
      METRICS_PORT: '-1',
    });
    // The worker's probes still reach its own HTTP port, moved off the server's 8000.
    expect(worker?.ports).toEqual([{ name: 'http', containerPort: 8010 }]);
    expect(inference).toMatchObject({
      image: 'nvcf/echo-server:dev',
      ports: [{ name: 'inference', containerPort: 8000 }],
      readinessProbe: { httpGet: { path: '/health', port: 8000 } },
    });
    // The work dir at the same path in both; the secrets (NVCF's /var/secrets/secrets.json) written by the worker,
    // read by the server, in memory only.
    expect(worker?.volumeMounts).toEqual([
      { name: 'nvcf-inference-work', mountPath: '/var/inf' },
      { name: 'nvcf-function-secrets', mountPath: '/var/secrets' },
    ]);
    expect(inference?.volumeMounts).toEqual([
      { name: 'nvcf-inference-work', mountPath: '/var/inf' },
      { name: 'nvcf-function-secrets', mountPath: '/var/secrets', readOnly: true },
    ]);
    expect(pod.volumes).toEqual([
      { name: 'nvcf-inference-work', emptyDir: {} },
      { name: 'nvcf-function-secrets', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
    ]);
  });

  it("runs containerArgs as the container's command, with its environment", () => {
    const [, deployment] = workerPool({
      ...EXAMPLE_CONTAINER_POOL,
      inference: {
        image: 'img',
        command: 'python serve.py --port $PORT',
        env: [{ key: 'MODE', value: 'fast' }],
        port: 9000,
        healthPath: '/ready',
        healthPort: 9001,
      },
    });
    const inference = deployment.spec?.template.spec?.containers[1];
    expect(inference?.command).toEqual(['sh', '-c', 'python serve.py --port $PORT']);
    expect(inference?.env).toEqual([
      { name: 'MODE', value: 'fast' },
      { name: 'PORT', value: '9000' },
    ]);
    expect(inference?.readinessProbe?.httpGet).toEqual({ path: '/ready', port: 9001 });
  });
});

describe('validateManifest', () => {
  it('refuses a kind it has no schema for, and a field of the wrong type', () => {
    expect(() => validateManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } })).toThrow(
      /Pod p: no schema for v1\/Pod/,
    );
    const [, deployment] = workerPool({ functionId, versionId, functionName: 'x', specifications: [] });
    const bad = deployment.toJSON() as { spec: { replicas?: unknown } };
    bad.spec.replicas = 'two';
    expect(() => validateManifest(bad)).toThrow(/Deployment worker-.*replicas must be integer/);
  });
});
