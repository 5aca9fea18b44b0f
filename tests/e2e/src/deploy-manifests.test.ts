/**
 * deploy/kubernetes as a cluster would get it: every overlay rendered by `kubectl kustomize`, every object checked
 * against the Kubernetes and KEDA schemas, and what matters checked by name: probes, drain, GPUs, the
 * NetworkPolicy, the Secrets, and that every variable set is one the gateway or the worker reads and parses.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
// The apps' own env schemas and loaders: a variable the manifests set must be one they read.
import { GatewayEnv, loadGatewayConfig } from '@nvcf/gateway';
import {
  CONFIG_MAP,
  type Manifest,
  NAMESPACE,
  parseManifests,
  SCALER_SECRET,
  SCALER_SECRET_KEY,
  SECRET,
  TRIGGER_AUTHENTICATION,
  workerDeployment,
} from '@nvcf/kubernetes';
import { kustomize } from '@nvcf/kubernetes/testing/kustomize';
import { EXAMPLE_CONTAINER_POOL_FILE, EXAMPLE_POOL, EXAMPLE_POOL_FILE } from '@nvcf/kubernetes/worker-pool-example';
import { loadWorkerConfig, WorkerEnv } from '@nvcf/worker';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const deployDir = resolve(root, 'deploy/kubernetes');
const OVERLAYS = ['cpu', 'gpu'] as const;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
}
interface Container {
  name: string;
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  containers: Container[];
  enableServiceLinks?: boolean;
  terminationGracePeriodSeconds?: number;
}
type Workload = Manifest & {
  spec: { template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
};
type NetworkPolicy = Manifest & {
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: string[];
    ingress: { from: Record<string, unknown>[]; ports: { protocol: string; port: number }[] }[];
  };
};

const rendered = new Map<string, Manifest[]>();
let examplePool: Manifest[];
let exampleSecret: Record<string, string>;
/** The example Secret file as written: an optional key may be there commented out (`# NAME=`). */
let exampleSecretText: string;

/** An env file as `kubectl create secret generic --from-env-file` reads it. */
function envFile(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);
  return Object.fromEntries(entries);
}

beforeAll(async () => {
  for (const overlay of OVERLAYS) {
    rendered.set(overlay, parseManifests(await kustomize(resolve(deployDir, 'overlays', overlay))));
  }
  // Both example pools: a model function's, and a container function's (sidecar pods).
  examplePool = [
    ...parseManifests(await readFile(EXAMPLE_POOL_FILE, 'utf8')),
    ...parseManifests(await readFile(EXAMPLE_CONTAINER_POOL_FILE, 'utf8')),
  ];
  exampleSecretText = await readFile(resolve(deployDir, 'secrets.env.example'), 'utf8');
  exampleSecret = envFile(exampleSecretText);
});

const docs = (overlay: string) => rendered.get(overlay) ?? [];
const find = (all: Manifest[], kind: string, name: string) =>
  all.find((d) => d.kind === kind && d.metadata.name === name);
const workloads = (all: Manifest[]) =>
  all.filter((d): d is Workload => d.kind === 'Deployment' || d.kind === 'StatefulSet');
const workers = (all: Manifest[]) =>
  workloads(all).filter((d) => d.spec.template.metadata.labels['app.kubernetes.io/component'] === 'worker');
const configData = (all: Manifest[]) =>
  ((find(all, 'ConfigMap', CONFIG_MAP) as { data?: Record<string, string> } | undefined)?.data ?? {}) as Record<
    string,
    string
  >;

/**
 * A container's environment as the kubelet would give it: envFrom first, then env; Secrets from the example file
 * with values long enough for the apps' checks, the pod's name for a fieldRef.
 */
function containerEnv(c: Container, config: Record<string, string>): Record<string, string> {
  const secret = Object.fromEntries(Object.keys(exampleSecret).map((k) => [k, exampleSecret[k] || 'x'.repeat(32)]));
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, config);
    if (from.secretRef) Object.assign(env, secret);
  }
  for (const v of c.env ?? []) {
    const ref = v.valueFrom;
    env[v.name] = v.value ?? (ref?.secretKeyRef ? (secret[ref.secretKeyRef.key] ?? '') : 'pod-name');
  }
  return env;
}

describe.each(OVERLAYS)('overlays/%s', (overlay) => {
  it('renders, and every object is valid against its Kubernetes schema', () => {
    const all = docs(overlay);
    expect(all.length).toBeGreaterThan(0);
    for (const d of all) expect(d.metadata.namespace, `${d.kind} ${d.metadata.name}`).toBe(NAMESPACE);
  });

  it('the gateway: Deployment, Service, CPU HorizontalPodAutoscaler, PodDisruptionBudget', () => {
    const all = docs(overlay);
    expect(find(all, 'Deployment', 'gateway')).toBeDefined();
    expect(find(all, 'Service', 'gateway')).toMatchObject({ spec: { ports: [{ port: 8080 }, { port: 8081 }] } });
    expect(find(all, 'HorizontalPodAutoscaler', 'gateway')).toMatchObject({
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'gateway' },
        metrics: [{ type: 'Resource', resource: { name: 'cpu' } }],
      },
    });
    expect(find(all, 'PodDisruptionBudget', 'gateway')).toMatchObject({ spec: { minAvailable: 1 } });
  });

  it('Redis: a StatefulSet with AOF and noeviction, as docker-compose.yml runs it', () => {
    const redis = find(docs(overlay), 'StatefulSet', 'redis') as Workload | undefined;
    const args = (redis?.spec.template.spec.containers[0] as { args?: string[] } | undefined)?.args?.join(' ');
    expect(args).toContain('--appendonly yes');
    expect(args).toContain('--maxmemory-policy noeviction');
  });

  it('workers: /v2/health/ready and /live probes, a preStop pause, a grace period covering the drain', () => {
    const drainSeconds = loadWorkerConfig({}).shutdownTimeoutMs / 1000;
    const pools = workers(docs(overlay));
    expect(pools.length).toBeGreaterThan(0);
    for (const w of [...pools, ...workers(examplePool)]) {
      const pod = w.spec.template.spec;
      const [c] = pod.containers;
      expect(c?.readinessProbe?.httpGet).toEqual({ path: '/v2/health/ready', port: 'http' });
      expect(c?.livenessProbe?.httpGet).toEqual({ path: '/v2/health/live', port: 'http' });
      const [cmd, seconds] = c?.lifecycle?.preStop?.exec?.command ?? [];
      expect(cmd).toBe('sleep');
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(Number(seconds) + drainSeconds);
      // Beside an inference container the worker's port moves to 8010, leaving 8000 to the server.
      const sidecar = pod.containers.some((other) => other.name === 'inference');
      expect(c?.ports?.map((p) => p.containerPort)).toEqual(sidecar ? [8010] : [8000, 8001, 8002]);
    }
  });

  it('the gateway’s grace period covers its preStop pause and GATEWAY_SHUTDOWN_GRACE_MS', () => {
    const gateway = find(docs(overlay), 'Deployment', 'gateway') as Workload;
    const pod = gateway.spec.template.spec;
    const [, seconds] = pod.containers[0]?.lifecycle?.preStop?.exec?.command ?? [];
    const graceSeconds = loadGatewayConfig({}).shutdownGraceMs / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(Number(seconds) + graceSeconds);
  });

  it('no pod gets service links (they would set GATEWAY_PORT=tcp://…, a setting the gateway reads)', () => {
    for (const w of [...workloads(docs(overlay)), ...workloads(examplePool)]) {
      expect(w.spec.template.spec.enableServiceLinks, w.metadata.name).toBe(false);
    }
  });

  it('the worker Deployments are what the builder behind `nvcf kube worker-pool` makes', () => {
    const all = docs(overlay);
    expect(find(all, 'Deployment', 'worker')).toEqual(
      workerDeployment({ name: 'worker', namespace: NAMESPACE, gpu: false, replicas: 1 }).toJSON(),
    );
    if (overlay === 'gpu') {
      expect(find(all, 'Deployment', 'worker-gpu')).toEqual(
        workerDeployment({ name: 'worker-gpu', namespace: NAMESPACE, gpu: true, replicas: 1 }).toJSON(),
      );
    }
  });

  it('a NetworkPolicy admits the worker ports 8000, 8001, 8002 from this namespace only, for every worker', () => {
    const all = docs(overlay);
    const policy = find(all, 'NetworkPolicy', 'worker-ports') as NetworkPolicy | undefined;
    expect(policy?.spec.policyTypes).toEqual(['Ingress']);
    // One rule: from pods of the policy's own namespace (a bare podSelector: no namespaceSelector, no ipBlock).
    expect(policy?.spec.ingress).toEqual([
      {
        from: [{ podSelector: {} }],
        ports: [8000, 8001, 8002].map((port) => ({ protocol: 'TCP', port })),
      },
    ]);
    const selector = Object.entries(policy?.spec.podSelector.matchLabels ?? {});
    expect(selector.length).toBeGreaterThan(0);
    for (const w of [...workers(all), ...workers(examplePool)]) {
      const labels = w.spec.template.metadata.labels;
      expect(
        selector.every(([k, v]) => labels[k] === v),
        w.metadata.name,
      ).toBe(true);
    }
  });

  it('the GPU workers ask for an nvidia.com/gpu; the CPU ones do not', () => {
    for (const w of workers(docs(overlay))) {
      const resources = w.spec.template.spec.containers[0]?.resources;
      const gpu = w.metadata.name === 'worker-gpu';
      expect(resources?.requests?.['nvidia.com/gpu'], w.metadata.name).toBe(gpu ? '1' : undefined);
      expect(resources?.limits?.['nvidia.com/gpu'], w.metadata.name).toBe(gpu ? '1' : undefined);
    }
    if (overlay === 'gpu') expect(find(docs(overlay), 'Deployment', 'worker-gpu')).toBeDefined();
  });

  it('every Secret and ConfigMap referenced exists, with the keys referenced', () => {
    const all = docs(overlay);
    const config = configData(all);
    for (const w of [...workloads(all), ...workloads(examplePool)]) {
      for (const c of w.spec.template.spec.containers) {
        for (const from of c.envFrom ?? []) {
          if (from.configMapRef) expect(from.configMapRef.name).toBe(CONFIG_MAP);
          if (from.secretRef) expect(from.secretRef.name).toBe(SECRET);
        }
        for (const v of c.env ?? []) {
          const secret = v.valueFrom?.secretKeyRef;
          if (secret?.optional) {
            expect(secret.name).toBe(SECRET);
            expect(exampleSecretText, `${w.metadata.name}: ${secret.key}`).toMatch(
              new RegExp(`^(# )?${secret.key}=`, 'm'),
            );
          } else if (secret) {
            expect(secret.name).toBe(SECRET);
            expect(Object.keys(exampleSecret), `${w.metadata.name}: ${secret.key}`).toContain(secret.key);
          }
          expect(v.valueFrom?.configMapKeyRef).toBeUndefined();
        }
      }
    }
    expect(Object.keys(config).length).toBeGreaterThan(0);
  });

  it('every variable set is one the gateway or the worker reads, and the apps parse the whole environment', () => {
    const all = docs(overlay);
    const config = configData(all);
    const gatewayReads = new Set(Object.keys(GatewayEnv.shape));
    const workerReads = new Set(Object.keys(WorkerEnv.shape));
    for (const w of [...workloads(all), ...workloads(examplePool)]) {
      for (const c of w.spec.template.spec.containers) {
        // Not ours: Redis, and a container function's own server.
        if (c.name === 'redis' || c.name === 'inference') continue;
        const env = containerEnv(c, config);
        const reads = c.name === 'gateway' ? gatewayReads : workerReads;
        for (const name of Object.keys(env)) expect(reads, `${w.metadata.name} sets ${name}`).toContain(name);
        if (c.name === 'gateway') {
          expect(loadGatewayConfig(env)).toMatchObject({ port: 8080, grpcPort: 8081, objectStore: { kind: 's3' } });
        } else {
          expect(c.name).toBe('worker');
          const parsed = loadWorkerConfig(env);
          const ports = parsed.container.url
            ? { httpPort: 8010, grpcPort: -1, metricsPort: -1 }
            : { httpPort: 8000, grpcPort: 8001, metricsPort: 8002 };
          expect(parsed).toMatchObject({ ...ports, workerId: 'pod-name' });
          const pool = w.metadata.labels?.['nvcf-function-version-id'];
          expect(parsed.functionVersionIds).toEqual(pool ? [pool] : []);
        }
      }
    }
  });
});

describe('KEDA: the example worker pool (nvcf kube worker-pool)', () => {
  it('scales from zero on the version’s queueDepth, reading the queue with the scaler Secret', async () => {
    const scaler = examplePool.find((d) => d.kind === 'ScaledObject') as
      | (Manifest & { spec: { minReplicaCount: number; triggers: { metadata: Record<string, string> }[] } })
      | undefined;
    expect(scaler?.spec.minReplicaCount).toBe(0);
    expect(scaler?.spec.triggers[0]?.metadata).toMatchObject({
      valueLocation: 'queues.0.queueDepth',
      url: expect.stringContaining(`/v2/nvcf/queues/functions/${EXAMPLE_POOL.functionId}/versions/`),
    });
    const auth = examplePool.find((d) => d.kind === 'TriggerAuthentication') as
      | (Manifest & { spec: { secretTargetRef: { name: string; key: string }[] } })
      | undefined;
    expect(auth?.metadata.name).toBe(TRIGGER_AUTHENTICATION);
    expect(auth?.spec.secretTargetRef).toEqual([{ parameter: 'token', name: SCALER_SECRET, key: SCALER_SECRET_KEY }]);
    // That Secret is the user's to create (its key exists only once the gateway runs): the README says how.
    const readme = await readFile(resolve(root, 'README.md'), 'utf8');
    const creates = `create secret generic ${SCALER_SECRET} --from-literal=${SCALER_SECRET_KEY}=`;
    expect(readme.includes(creates), `README.md shows: kubectl … ${creates}…`).toBe(true);
  });
});
