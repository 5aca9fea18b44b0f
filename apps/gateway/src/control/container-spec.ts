import type { ContainerSpec } from '@nvcf/control-store';
import { AppError, type CreateFunctionRequest, parseServerPath } from '@nvcf/protocol';

/** NVCF's default health check path and timeout (NVCF docs: function creation, container functions). */
const DEFAULT_HEALTH_URI = '/v2/health/ready';
const DEFAULT_HEALTH_TIMEOUT_MS = 10_000;

/** Milliseconds of an ISO-8601 duration as NVCF's `health.timeout` takes them (`PT10S`, `PT1M30S`, `P1D`). */
export function isoDurationMs(text: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (!m)
    throw new AppError('INVALID_ARGUMENT', `Invalid request: 'timeout' must be an ISO-8601 duration such as 'PT10S'`);
  const [, d, h, min, s] = m;
  return Math.round((((Number(d ?? 0) * 24 + Number(h ?? 0)) * 60 + Number(min ?? 0)) * 60 + Number(s ?? 0)) * 1000);
}

/**
 * The container a create request describes, or undefined for a model function. A request whose `models` name
 * the ONNX model to serve is a model function (its `containerImage`, if any, names the worker's image); one
 * without `models` that names a `containerImage` is a container function (NVCF: "bring your container"). What
 * this product cannot run is refused here, with why, rather than accepted and never served: Helm chart
 * functions (no cluster to install them in) and gRPC health checks (the worker checks health over HTTP).
 */
export function containerSpecOf(req: CreateFunctionRequest): ContainerSpec | undefined {
  if (req.helmChart) {
    throw new AppError(
      'INVALID_ARGUMENT',
      "Invalid request: Helm chart functions are not supported by this deployment; register a container ('containerImage') or an ONNX model ('models')",
    );
  }
  if (!req.containerImage || (req.models && req.models.length > 0)) return undefined;
  if (req.health?.protocol === 'gRPC') {
    throw new AppError(
      'INVALID_ARGUMENT',
      "Invalid request: 'health.protocol' gRPC is not supported by this deployment; use HTTP",
    );
  }
  // Paths only: the worker sets them on the server's own origin, so no tenant can aim it at another address.
  if (parseServerPath(req.inferenceUrl) === undefined) {
    throw new AppError(
      'INVALID_ARGUMENT',
      "Invalid request: 'inferenceUrl' must be the path the container serves, such as '/echo' (a path on the container's own server: no host, no '//' or '\\', no spaces or control characters)",
    );
  }
  const uri = parseServerPath(req.health?.uri ?? req.healthUri ?? DEFAULT_HEALTH_URI);
  if (uri === undefined) {
    throw new AppError(
      'INVALID_ARGUMENT',
      "Invalid request: 'healthUri' must be a path, such as '/v2/health/ready' (a path on the container's own server: no host, no '//' or '\\', no spaces or control characters)",
    );
  }
  return {
    image: req.containerImage,
    ...(req.containerArgs !== undefined ? { args: req.containerArgs } : {}),
    environment: req.containerEnvironment ?? [],
    ...(req.inferencePort !== undefined ? { inferencePort: req.inferencePort } : {}),
    health: {
      uri,
      ...(req.health && req.health.port !== req.inferencePort ? { port: req.health.port } : {}),
      timeoutMs: req.health ? Math.max(1, isoDurationMs(req.health.timeout)) : DEFAULT_HEALTH_TIMEOUT_MS,
      expectedStatusCode: req.health?.expectedStatusCode ?? 200,
    },
  };
}
