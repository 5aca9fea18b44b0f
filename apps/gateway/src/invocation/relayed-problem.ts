import { AppError, type ErrorCode, PROBLEM_CONTENT_TYPE, statusTitle } from '@nvcf/protocol';
import type { InvocationResult } from '@nvcf/queue';

/**
 * A function's failure as the gateway relays it: NVCF's error body carries `type, title, status,
 * detail, instance, requestId`. The worker cannot know `instance` (the path the client called: pexec,
 * a status poll, exec or a gRPC method), so the gateway fills it, and any other field the function's
 * problem+json left out, without touching what the function did say. Bodies that are not problem+json
 * (a function's own error format) are relayed as they are.
 */
export function relayedProblem(result: InvocationResult, instance: string, requestId: string): InvocationResult {
  if (result.ok || !result.contentType.toLowerCase().startsWith(PROBLEM_CONTENT_TYPE)) return result;
  let body: unknown;
  try {
    body = JSON.parse(result.body.toString('utf8'));
  } catch {
    return result;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return result;
  const title = statusTitle(result.status);
  const said = body as Record<string, unknown>;
  const text = (key: string, fallback: string) => (typeof said[key] === 'string' ? (said[key] as string) : fallback);
  // NVCF's order first, then whatever else the function said.
  const complete: Record<string, unknown> = {
    type: text('type', `urn:nvcf-worker-service:problem-details:${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`),
    title: text('title', title),
    status: typeof said.status === 'number' ? said.status : result.status,
    detail: text('detail', title),
    instance: text('instance', instance),
    requestId: text('requestId', requestId),
  };
  for (const [key, value] of Object.entries(said)) if (!(key in complete)) complete[key] = value;
  return { ...result, body: Buffer.from(JSON.stringify(complete)) };
}

/**
 * A relayed failure on a gRPC call: the status says what (`code`, `detail`), the trailers carry the
 * whole problem+json (`nvcf-problem-details-bin`) and the request id, for clients that want them.
 */
export class RelayedFunctionError extends AppError {
  readonly problem: Buffer;
  readonly requestId: string;
  constructor(code: ErrorCode, message: string, problem: Buffer, requestId: string) {
    super(code, message);
    this.problem = problem;
    this.requestId = requestId;
  }
}
