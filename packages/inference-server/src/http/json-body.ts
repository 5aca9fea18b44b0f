import { AppError } from '@nvcf/protocol';
import { readRequestBody } from '@nvcf/service-kit';

/**
 * An optional JSON object body (repository routes): undefined when the body is empty, else the parsed
 * object. Anything else is a 400 naming `what`.
 */
export async function readOptionalJsonObject(
  req: Request,
  maxBytes: number,
  what: string,
): Promise<Record<string, unknown> | undefined> {
  const body = await readRequestBody(req, maxBytes);
  const text = body.toString('utf8');
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('INVALID_ARGUMENT', `${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('INVALID_ARGUMENT', `${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** `body.parameters` as an object, or {} when absent. */
export function parametersOf(body: Record<string, unknown> | undefined, what: string): Record<string, unknown> {
  const parameters = body?.parameters;
  if (parameters === undefined) return {};
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new AppError('INVALID_ARGUMENT', `${what}: 'parameters' must be a JSON object`);
  }
  return parameters as Record<string, unknown>;
}
