import { createHash } from 'node:crypto';
import { AppError } from '@nvcf/protocol';

/** What makes two calls "the same" for an Idempotency-Key: the function (and version) and the body. */
export interface IdempotentCall {
  key: string;
  fingerprint: string;
}

/**
 * Parses `Idempotency-Key` (IETF httpapi draft "The Idempotency-Key HTTP Header Field": a Structured
 * Field string, `"…"`; the bare value clients often send is taken too). Undefined when absent.
 *
 * @throws AppError INVALID_ARGUMENT for an empty, over-long or non-printable key
 */
export function parseIdempotencyKey(
  header: string | undefined,
  call: { functionId: string; versionId?: string; body: Buffer },
): IdempotentCall | undefined {
  if (header === undefined) return undefined;
  const raw = header.trim();
  const key = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new AppError('INVALID_ARGUMENT', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  }
  const fingerprint = createHash('sha256')
    .update(`${call.functionId}\n${call.versionId ?? ''}\n`)
    .update(call.body)
    .digest('base64url');
  return { key, fingerprint };
}
