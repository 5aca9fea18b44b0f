import { AppError } from '@nvcf/protocol';
import type { InvocationInput } from '@nvcf/queue';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * Turns the raw body into the job's input. JSON (declared, or undeclared: NVCF's worker defaults the
 * content type to JSON) is checked here so a syntax error is a 400 at once instead of a queue trip.
 */
export function parseInvocationBody(body: Buffer, contentType: string | undefined): InvocationInput {
  const type = contentType?.trim() || 'application/json';
  if (!JSON_TYPE.test(type)) return { kind: 'bytes', contentType: type, base64: body.toString('base64') };
  if (body.length === 0) throw new AppError('INVALID_ARGUMENT', 'request body is empty; expected JSON');
  try {
    return { kind: 'json', contentType: type, value: JSON.parse(body.toString('utf8')) };
  } catch (err) {
    throw new AppError('INVALID_ARGUMENT', `request body is not valid JSON: ${(err as Error).message}`);
  }
}
