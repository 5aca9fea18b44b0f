import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import type { InvocationJob } from '@nvcf/queue';

/** Headers that belong to one connection (RFC 9110 §7.6.1) or that the worker sets itself. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'authorization',
  'expect',
]);

export interface RequestPlace {
  assetDir: string;
  largeOutputDir: string;
  maxResponseBytes: number;
  ncaId: string;
}

/**
 * The headers of the request to the inference server (NVCF docs: container functions, request headers): the
 * client's (minus hop-by-hop and worker-owned names, and every `NVCF-*` name, which only the worker sets) and
 * NVCF's own, as NVCF's worker sets them, with the deployment's `NVCF-BACKEND` and `NVCF-INSTANCETYPE` when known.
 */
export function inferenceHeaders(
  job: Pick<InvocationJob, 'requestId' | 'headers' | 'assetIds'>,
  fv: FunctionVersion & { container: ContainerSpec },
  contentType: string,
  place: RequestPlace,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(job.headers)) {
    const lower = name.toLowerCase();
    if (NOT_FORWARDED.has(lower) || lower.startsWith('nvcf-')) continue;
    out[lower] = value;
  }
  out['content-type'] = contentType || 'application/json';
  out['nvcf-reqid'] = job.requestId;
  out['nvcf-ncaid'] = place.ncaId;
  out['nvcf-function-id'] = fv.id;
  out['nvcf-function-version-id'] = fv.versionId;
  out['nvcf-function-name'] = fv.name;
  out['nvcf-asset-dir'] = place.assetDir;
  out['nvcf-large-output-dir'] = place.largeOutputDir;
  out['nvcf-max-response-size-bytes'] = String(place.maxResponseBytes);
  if (job.assetIds && job.assetIds.length > 0) out['nvcf-function-asset-ids'] = job.assetIds.join(',');
  const { backend, instanceType } = deploymentMetadata(fv);
  if (backend) out['nvcf-backend'] = backend;
  if (instanceType) out['nvcf-instancetype'] = instanceType;
  return out;
}

/** The deployment's `backend` and `instanceType` (NVCF's deployment metadata), where its specification names them. */
export function deploymentMetadata(fv: FunctionVersion): { backend?: string; instanceType?: string } {
  const spec = fv.deployment?.specifications[0];
  return {
    ...(typeof spec?.backend === 'string' ? { backend: spec.backend } : {}),
    ...(typeof spec?.instanceType === 'string' ? { instanceType: spec.instanceType } : {}),
  };
}
