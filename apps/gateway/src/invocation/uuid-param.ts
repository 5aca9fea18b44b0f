import { AppError } from '@nvcf/protocol';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids in paths are UUIDs; anything else is refused before it can reach a Redis key. */
export function uuidParam(name: string, value: string): string {
  if (!UUID.test(value)) throw new AppError('INVALID_ARGUMENT', `${name} '${value.slice(0, 64)}' is not a UUID`);
  return value.toLowerCase();
}
