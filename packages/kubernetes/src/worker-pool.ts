import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import type { Deployment } from 'kubernetes-models/apps/v1';
import { manifestsYaml } from './manifest-models.ts';
import {
  appLabels,
  defaultGatewayUrl,
  NAMESPACE,
  SCALER_SECRET,
  SCALER_SECRET_KEY,
  TRIGGER_AUTHENTICATION,
} from './names.ts';
import { type InferenceContainer, workerDeployment } from './worker-deployment.ts';

/** What a version's deployment says about its instances (NVCF DeploymentSpecification). */
export interface InstanceSpecification {
  gpu: string;
  minInstances: number;
  maxInstances: number;
  maxRequestConcurrency?: number;
}

export interface WorkerPoolOptions {
  functionId: string;
  versionId: string;
  functionName: string;
  /** The deployment's specifications; none (a repository model's function): 0 to 1 instance on CPU. */
  specifications: readonly InstanceSpecification[];
  namespace?: string;
  /** How KEDA's operator, in its own namespace, reaches the gateway. */
  gatewayUrl?: string;
  image?: string;
  gpuImage?: string;
  /** A container function: its server runs in each worker pod, beside the worker (sidecar mode). */
  inference?: InferenceContainer;
}

/** The autoscaling a pool gets from its version's deployment. */
export interface PoolScaling {
  gpu: boolean;
  minReplicas: number;
  maxReplicas: number;
  /** Pending requests one replica takes: the deployment's `maxRequestConcurrency`. */
  pendingPerReplica: number;
}

/**
 * `minInstances`/`maxInstances` are summed over the specifications, as the gateway counts them
 * (control/function-service.ts); a pool runs the GPU image unless every specification asks for `CPU`.
 */
export function poolScaling(specs: readonly InstanceSpecification[]): PoolScaling {
  if (specs.length === 0) return { gpu: false, minReplicas: 0, maxReplicas: 1, pendingPerReplica: 1 };
  return {
    gpu: specs.some((s) => s.gpu.toUpperCase() !== 'CPU'),
    minReplicas: specs.reduce((n, s) => n + s.minInstances, 0),
    maxReplicas: specs.reduce((n, s) => n + s.maxInstances, 0),
    pendingPerReplica: specs[0]?.maxRequestConcurrency ?? 1,
  };
}

/** KEDA's credential for the queue endpoint: the `queue_details` key in the `nvcf-keda-scaler` Secret. */
export function queueTriggerAuthentication(namespace = NAMESPACE): TriggerAuthentication {
  return new TriggerAuthentication({
    metadata: { name: TRIGGER_AUTHENTICATION, namespace, labels: appLabels('worker') },
    spec: { secretTargetRef: [{ parameter: 'token', name: SCALER_SECRET, key: SCALER_SECRET_KEY }] },
  });
}

/**
 * A worker pool for one function version: the TriggerAuthentication KEDA reads queues with, a Deployment whose
 * workers serve only this version (`WORKER_FUNCTION_VERSIONS`), and a ScaledObject that scales it on the version's
 * `queueDepth` (waiting plus running) from `minInstances` (0: nothing runs while the queue is empty; the first
 * request waits in the queue and wakes it) to `maxInstances`.
 *
 * @example
 * const [auth, deployment, scaler] = workerPool({ functionId, versionId, functionName: 'echo', specifications });
 */
export function workerPool(opts: WorkerPoolOptions): [TriggerAuthentication, Deployment, ScaledObject] {
  const namespace = opts.namespace ?? NAMESPACE;
  const scaling = poolScaling(opts.specifications);
  const name = `worker-${opts.versionId}`;
  const labels = { 'nvcf-function-id': opts.functionId, 'nvcf-function-version-id': opts.versionId };
  const image = scaling.gpu ? opts.gpuImage : opts.image;
  const deployment = workerDeployment({
    name,
    namespace,
    gpu: scaling.gpu,
    ...(image ? { image } : {}),
    functionVersionIds: [opts.versionId],
    labels,
    annotations: { 'nvcf-function-name': opts.functionName },
    ...(opts.inference ? { inference: opts.inference } : {}),
  });
  const queueUrl =
    `${opts.gatewayUrl ?? defaultGatewayUrl(namespace)}` +
    `/v2/nvcf/queues/functions/${opts.functionId}/versions/${opts.versionId}`;
  const scaler = new ScaledObject({
    metadata: { name, namespace, labels: { ...appLabels('worker'), ...labels } },
    spec: {
      scaleTargetRef: { name },
      minReplicaCount: scaling.minReplicas,
      maxReplicaCount: scaling.maxReplicas,
      // The first request of an idle version waits for this poll, then for a pod to start.
      pollingInterval: 5,
      // How long an idle pool stays up before it goes to zero (KEDA's default).
      cooldownPeriod: 300,
      triggers: [
        {
          type: 'metrics-api',
          metricType: 'AverageValue',
          metadata: {
            url: queueUrl,
            valueLocation: 'queues.0.queueDepth',
            targetValue: String(scaling.pendingPerReplica),
            activationTargetValue: '0',
            authMode: 'bearer',
          },
          authenticationRef: { name: TRIGGER_AUTHENTICATION },
        },
      ],
    },
  });
  return [queueTriggerAuthentication(namespace), deployment, scaler];
}

/** Several versions' pools: KEDA's TriggerAuthentication once per namespace, then each Deployment and ScaledObject. */
export function workerPools(
  pools: readonly WorkerPoolOptions[],
): (TriggerAuthentication | Deployment | ScaledObject)[] {
  const namespaces = new Set<string>();
  return pools.flatMap((pool) => {
    const [auth, deployment, scaler] = workerPool(pool);
    const ns = pool.namespace ?? NAMESPACE;
    const first = !namespaces.has(ns);
    namespaces.add(ns);
    return first ? [auth, deployment, scaler] : [deployment, scaler];
  });
}

/** `nvcf kube worker-pool`'s output, for `kubectl apply -f -`: the pools under a comment saying what each got. */
export function workerPoolsYaml(pools: readonly WorkerPoolOptions[]): string {
  const lines = pools.map((pool) => {
    const s = poolScaling(pool.specifications);
    return (
      `${JSON.stringify(pool.functionName)} version ${pool.versionId}: ${s.gpu ? 'GPU' : 'CPU'} workers` +
      `${pool.inference ? ` beside ${pool.inference.image}` : ''}, ` +
      `${s.minReplicas} to ${s.maxReplicas}, one per ${s.pendingPerReplica} pending request(s)`
    );
  });
  const header = [
    'Worker pools (nvcf kube worker-pool), each scaled by KEDA on its version’s pending requests:',
    ...lines,
    'Needs KEDA and the nvcf-keda-scaler Secret (README: "Run on Kubernetes").',
  ];
  return manifestsYaml(workerPools(pools), header);
}
