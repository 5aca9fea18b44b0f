import { AppError } from '@nvcf/protocol';
import type { InvocationInput } from '@nvcf/queue';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * Turns the raw body into the job's input. JSON (declared, or undeclared: NVCF's worker defaults the
 * content type to JSON) is checked here so a syntax error is a 400 at once instead of a queue trip.
 * A KServe binary-extension body (`Inference-Header-Content-Length` present) is JSON followed by raw
 * bytes, whatever its declared type (tritonclient declares none): it travels as bytes — the body itself,
 * in the queue entry or beside the job by its size (invocation-service.ts).
 */
export function parseInvocationBody(
  body: Buffer,
  contentType: string | undefined,
  opts: { binaryExtension?: boolean } = {},
): InvocationInput {
  const type = contentType?.trim() || (opts.binaryExtension ? 'application/octet-stream' : 'application/json');
  if (opts.binaryExtension || !JSON_TYPE.test(type)) {
    return { kind: 'entry', contentType: type };
  }
  if (body.length === 0) throw new AppError('INVALID_ARGUMENT', 'request body is empty; expected JSON');
  try {
    return { kind: 'json', contentType: type, value: JSON.parse(body.toString('utf8')) };
  } catch (err) {
    throw new AppError('INVALID_ARGUMENT', `request body is not valid JSON: ${(err as Error).message}`);
  }
}
