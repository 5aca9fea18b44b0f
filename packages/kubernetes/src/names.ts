/**
 * What the YAML in deploy/kubernetes and the builders here share: names, images, ports and drain times. The
 * tests hold the two to each other.
 */

/** The namespace `kubectl apply -k deploy/kubernetes/overlays/…` deploys into. */
export const NAMESPACE = 'nvcf';
/** Settings both apps read (object storage, key prefix, log level): base/config.env. */
export const CONFIG_MAP = 'nvcf-config';
/** Credentials: `kubectl create secret generic nvcf-secrets --from-env-file=…` (deploy/kubernetes/secrets.env.example). */
export const SECRET = 'nvcf-secrets';
/** The API key KEDA reads queues with (scope `queue_details`), under the key `token`. */
export const SCALER_SECRET = 'nvcf-keda-scaler';
export const SCALER_SECRET_KEY = 'token';
/** The TriggerAuthentication every worker pool's ScaledObject uses. */
export const TRIGGER_AUTHENTICATION = 'nvcf-queue-reader';

export const IMAGES = {
  gateway: 'nvcf/gateway:0.1.0',
  worker: 'nvcf/worker:0.1.0',
  workerGpu: 'nvcf/worker-gpu:0.1.0',
} as const;

/** Users of the images (the apps' Dockerfiles): `node` is 1000 in the Node image, 1001 in the CUDA one. */
export const RUN_AS_USER = { node: 1000, cuda: 1001 } as const;

export const GATEWAY_PORTS = { http: 8080, grpc: 8081 } as const;
/** KServe HTTP, gRPC and metrics: no NVCF credential, so a NetworkPolicy keeps them inside the namespace. */
export const WORKER_PORTS = { http: 8000, grpc: 8001, metrics: 8002 } as const;

/**
 * A pod leaves its Service's endpoints while it is already being stopped; waiting this long before SIGTERM lets
 * the endpoint removal reach every proxy first (kubernetes.io: "Pod Lifecycle", termination of Pods).
 */
export const PRE_STOP_SECONDS = 5;
/** `SHUTDOWN_TIMEOUT_MS`'s default (apps/worker/src/config.ts): how long SIGTERM waits for running jobs. */
export const WORKER_DRAIN_SECONDS = 30;
/** `GATEWAY_SHUTDOWN_GRACE_MS`'s default (apps/gateway/src/config.ts): open event streams' last moments. */
export const GATEWAY_DRAIN_SECONDS = 10;
/** The grace period counts from the preStop hook's start: hook, drain, then closing sockets and sessions. */
export const WORKER_TERMINATION_GRACE_SECONDS = PRE_STOP_SECONDS + WORKER_DRAIN_SECONDS + 10;
export const GATEWAY_TERMINATION_GRACE_SECONDS = PRE_STOP_SECONDS + GATEWAY_DRAIN_SECONDS + 15;

/** Labels every manifest here carries (kubernetes.io: recommended labels). */
export const appLabels = (component: 'gateway' | 'worker' | 'redis') => ({
  'app.kubernetes.io/name': 'nvcf',
  'app.kubernetes.io/component': component,
});

/** The gateway's Service as seen from another namespace (KEDA's operator runs in `keda`). */
export const defaultGatewayUrl = (namespace: string) =>
  `http://gateway.${namespace}.svc.cluster.local:${GATEWAY_PORTS.http}`;
