import { AppError } from '@nvcf/protocol';
import { readRequestBody } from '@nvcf/service-kit';

/** Control-plane bodies are small JSON documents. */
const MAX_CONTROL_BODY_BYTES = 1024 * 1024;

/** Reads and parses a JSON request body (400 when it is not JSON, 413 past 1 MiB). */
export async function readJsonBody(req: Request): Promise<unknown> {
  const body = await readRequestBody(req, MAX_CONTROL_BODY_BYTES);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new AppError('INVALID_ARGUMENT', `request body is not valid JSON: ${(err as Error).message}`);
  }
}
