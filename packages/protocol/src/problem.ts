/**
 * RFC 7807 problem details as NVCF emits them: `type, title, status, detail, instance, requestId`
 * (NVCF API; NVCF behaviour: errors).
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  requestId?: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function statusTitle(status: number): string {
  return STATUS_TITLES[status] ?? 'Error';
}

/**
 * Builds a problem. `source` names who produced it, as in NVCF's worker
 * (`urn:<source>:problem-details:<kebab-title>`): `nvcf-gateway`, `inference-service`, `nvcf-worker-service`.
 *
 * @example
 * problem(404, "Function '…' not found", { source: 'nvcf-gateway', instance: '/v2/nvcf/pexec/functions/…' })
 */
export function problem(
  status: number,
  detail: string,
  opts: { source?: string; instance?: string; requestId?: string } = {},
): Problem {
  const title = statusTitle(status);
  const kebab = title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const p: Problem = { type: `urn:${opts.source ?? 'nvcf-gateway'}:problem-details:${kebab}`, title, status, detail };
  if (opts.instance !== undefined) p.instance = opts.instance;
  if (opts.requestId !== undefined) p.requestId = opts.requestId;
  return p;
}
