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
  /** A container function's inference server, run beside the worker in each pod (sidecar mode). */
  inference?: InferenceContainer;
}

/** A container function's server as its FunctionDto describes it (NVCF container fields). */
export interface InferenceContainer {
  image: string;
  /** `containerArgs`: run with `sh -c` as the container's command (as the worker's process mode runs it). */
  command?: string;
  env?: readonly { key: string; value: string }[];
  /** `inferencePort`. */
  port: number;
  /** `healthUri` / `health.uri`, on `healthPort` (default: `port`). */
  healthPath: string;
  healthPort?: number;
}

/**
 * In a pod with an inference container, the worker's own HTTP port moves to 8010 (one of the ports NVCF reserves
 * for its worker, NVCF docs: container functions) so the server may listen on 8000, as Triton and NIMs do; the
 * worker's gRPC and metrics ports are off.
 */
export const SIDECAR_WORKER_HTTP_PORT = 8010;
/** Where both containers see each request's asset and large-output directories (NVCF: under `/var/inf`). */
export const INFERENCE_WORK_DIR = '/var/inf';
const WORK_VOLUME = 'nvcf-inference-work';
/**
 * Where the inference container finds its secrets, `secrets.json`, as in NVCF (NVCF docs: secrets): written by the
 * worker (WORKER_SECRETS_DIR) into a memory-backed volume the two containers share, mode 0600, so the server must
 * run as the worker's user (uid 1000, as the node and NVIDIA images' default users do).
 */
export const INFERENCE_SECRETS_DIR = '/var/secrets';
const SECRETS_VOLUME = 'nvcf-function-secrets';

const secretEnv = (name: string, optional = false): IEnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: SECRET, key: name, ...(optional ? { optional: true } : {}) } },
});

/** The worker's settings that make it the sidecar of the pod's inference container. */
function sidecarEnv(inference: InferenceContainer): IEnvVar[] {
  return [
    { name: 'WORKER_CONTAINER_URL', value: `http://127.0.0.1:${inference.port}` },
    { name: 'WORKER_CONTAINER_WORK_DIR', value: INFERENCE_WORK_DIR },
    { name: 'WORKER_SECRETS_DIR', value: INFERENCE_SECRETS_DIR },
    { name: 'KSERVE_HTTP_PORT', value: String(SIDECAR_WORKER_HTTP_PORT) },
    { name: 'KSERVE_GRPC_PORT', value: '-1' },
    { name: 'METRICS_PORT', value: '-1' },
  ];
}

function workerContainer(opts: WorkerDeploymentOptions): IContainer {
  const versions = opts.functionVersionIds ?? [];
  const gpu = { 'nvidia.com/gpu': '1' };
  const { inference } = opts;
  return {
    name: 'worker',
    image: opts.image ?? (opts.gpu ? IMAGES.workerGpu : IMAGES.worker),
    imagePullPolicy: 'IfNotPresent',
    ports: inference
      ? [{ name: 'http', containerPort: SIDECAR_WORKER_HTTP_PORT }]
      : [
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
      // Function secrets (README: Secrets): the gateway's key, when the Secret has one.
      secretEnv('NVCF_SECRETS_KEY', true),
      secretEnv('NVCF_SECRETS_PREVIOUS_KEY', true),
      { name: 'ORT_EXECUTION_PROVIDERS', value: opts.gpu ? 'cuda,cpu' : 'cpu' },
      ...(versions.length > 0 ? [{ name: 'WORKER_FUNCTION_VERSIONS', value: versions.join(',') }] : []),
      ...(inference ? sidecarEnv(inference) : []),
    ],
    ...(inference
      ? {
          volumeMounts: [
            { name: WORK_VOLUME, mountPath: INFERENCE_WORK_DIR },
            { name: SECRETS_VOLUME, mountPath: INFERENCE_SECRETS_DIR },
          ],
        }
      : {}),
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

/**
 * The function's own server. Its readiness follows its health check (the worker checks the same URI before it
 * serves the version); NVCF requires inference containers not to run as root.
 */
function inferenceContainer(inference: InferenceContainer): IContainer {
  return {
    name: 'inference',
    image: inference.image,
    imagePullPolicy: 'IfNotPresent',
    ...(inference.command ? { command: ['sh', '-c', inference.command] } : {}),
    ports: [{ name: 'inference', containerPort: inference.port }],
    env: [
      ...(inference.env ?? []).map(({ key, value }) => ({ name: key, value })),
      { name: 'PORT', value: String(inference.port) },
    ],
    readinessProbe: {
      httpGet: { path: inference.healthPath, port: inference.healthPort ?? inference.port },
      periodSeconds: 5,
      failureThreshold: 2,
    },
    volumeMounts: [
      { name: WORK_VOLUME, mountPath: INFERENCE_WORK_DIR },
      { name: SECRETS_VOLUME, mountPath: INFERENCE_SECRETS_DIR, readOnly: true },
    ],
    securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  };
}

function workerPodSpec(opts: WorkerDeploymentOptions): IPodSpec {
  return {
    // Service links would put e.g. WORKER_PORT=tcp://… into the environment, where the apps read their settings
    // (kubernetes.io: "Service", environment variables).
    enableServiceLinks: false,
    // SIGTERM drains: the worker stops taking jobs and waits up to SHUTDOWN_TIMEOUT_MS for the running ones.
    terminationGracePeriodSeconds: WORKER_TERMINATION_GRACE_SECONDS,
    containers: opts.inference ? [workerContainer(opts), inferenceContainer(opts.inference)] : [workerContainer(opts)],
    ...(opts.inference
      ? {
          volumes: [
            { name: WORK_VOLUME, emptyDir: {} },
            // Memory-backed: decrypted secrets never reach the node's disk.
            { name: SECRETS_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
          ],
        }
      : {}),
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
