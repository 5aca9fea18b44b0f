import { Deployment } from 'kubernetes-models/apps/v1';
import type { IContainer, IEnvVar, IPodSpec } from 'kubernetes-models/v1';
import {
  appLabels,
  CONFIG_MAP,
  IMAGES,
  PRE_STOP_SECONDS,
  RUN_AS_USER,
  SECRET,
  WORKER_PORTS,
  WORKER_TERMINATION_GRACE_SECONDS,
} from './names.ts';

export interface WorkerDeploymentOptions {
  /** The Deployment's name, also its pool label: `worker`, `worker-gpu`, `worker-<versionId>`. */
  name: string;
  namespace?: string;
  /** The worker image's `gpu` target: CUDA execution provider and one `nvidia.com/gpu`. */
  gpu: boolean;
  image?: string;
  /** Left out when an autoscaler owns the count (re-applying must not reset what KEDA chose). */
  replicas?: number;
  /** `WORKER_FUNCTION_VERSIONS`: the versions this pool serves (none: every deployed version). */
  functionVersionIds?: readonly string[];
  /** Extra labels on the Deployment and its pods. */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const secretEnv = (name: string): IEnvVar => ({ name, valueFrom: { secretKeyRef: { name: SECRET, key: name } } });

function workerContainer(opts: WorkerDeploymentOptions): IContainer {
  const versions = opts.functionVersionIds ?? [];
  const gpu = { 'nvidia.com/gpu': '1' };
  return {
    name: 'worker',
    image: opts.image ?? (opts.gpu ? IMAGES.workerGpu : IMAGES.worker),
    imagePullPolicy: 'IfNotPresent',
    ports: [
      { name: 'http', containerPort: WORKER_PORTS.http },
      { name: 'grpc', containerPort: WORKER_PORTS.grpc },
      { name: 'metrics', containerPort: WORKER_PORTS.metrics },
    ],
    envFrom: [{ configMapRef: { name: CONFIG_MAP } }],
    env: [
      // The pod's name: what `activeInstances` shows, and the name of the worker's own sequence queues.
      { name: 'WORKER_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      secretEnv('REDIS_URL'),
      secretEnv('S3_ACCESS_KEY_ID'),
      secretEnv('S3_SECRET_ACCESS_KEY'),
      { name: 'ORT_EXECUTION_PROVIDERS', value: opts.gpu ? 'cuda,cpu' : 'cpu' },
      ...(versions.length > 0 ? [{ name: 'WORKER_FUNCTION_VERSIONS', value: versions.join(',') }] : []),
    ],
    resources: opts.gpu
      ? { requests: { cpu: '1', memory: '4Gi', ...gpu }, limits: { memory: '8Gi', ...gpu } }
      : { requests: { cpu: '1', memory: '2Gi' }, limits: { memory: '4Gi' } },
    // The HTTP port opens once the model repository is loaded: a slow first load is not a dead worker.
    startupProbe: { httpGet: { path: '/v2/health/live', port: 'http' }, periodSeconds: 5, failureThreshold: 60 },
    livenessProbe: { httpGet: { path: '/v2/health/live', port: 'http' }, periodSeconds: 10, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: '/v2/health/ready', port: 'http' }, periodSeconds: 5, failureThreshold: 2 },
    lifecycle: { preStop: { exec: { command: ['sleep', String(PRE_STOP_SECONDS)] } } },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: opts.gpu ? RUN_AS_USER.cuda : RUN_AS_USER.node,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    },
  };
}

function workerPodSpec(opts: WorkerDeploymentOptions): IPodSpec {
  return {
    // Service links would put e.g. WORKER_PORT=tcp://… into the environment, where the apps read their settings
    // (kubernetes.io: "Service", environment variables).
    enableServiceLinks: false,
    // SIGTERM drains: the worker stops taking jobs and waits up to SHUTDOWN_TIMEOUT_MS for the running ones.
    terminationGracePeriodSeconds: WORKER_TERMINATION_GRACE_SECONDS,
    containers: [workerContainer(opts)],
    ...(opts.gpu ? { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] } : {}),
  };
}

/**
 * A Deployment of workers: the CPU or GPU image, its probes (`/v2/health/ready`, `/v2/health/live`), a preStop
 * pause and a grace period that covers the worker's drain. With `functionVersionIds`, a pool serving only those
 * versions. The YAML in deploy/kubernetes is held equal to what this builds.
 *
 * @example
 * workerDeployment({ name: 'worker-gpu', gpu: true, replicas: 1 }).validate();
 */
export function workerDeployment(opts: WorkerDeploymentOptions): Deployment {
  const selector = { ...appLabels('worker'), 'nvcf-worker-pool': opts.name };
  const labels = { ...selector, ...opts.labels };
  return new Deployment({
    metadata: {
      name: opts.name,
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
      labels,
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: {
      ...(opts.replicas === undefined ? {} : { replicas: opts.replicas }),
      selector: { matchLabels: selector },
      template: { metadata: { labels }, spec: workerPodSpec(opts) },
    },
  });
}
