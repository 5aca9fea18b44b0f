import { AppError } from '@nvcf/protocol';
import type { AssetService } from './asset-service.ts';

export const ASSET_REFERENCES_HEADER = 'nvcf-input-asset-references';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The asset ids of an `NVCF-INPUT-ASSET-REFERENCES` value (NVCF API; NVCF behaviour: assets):
 * comma-separated, whitespace trimmed, empty entries skipped (a header sent twice arrives joined with
 * ", "), lower-cased and de-duplicated in order of first mention.
 *
 * @throws AppError INVALID_ARGUMENT for an entry that is not a UUID
 */
export function parseAssetReferences(header: string | undefined): string[] {
  return assetIds((header ?? '').split(','), 'NVCF-INPUT-ASSET-REFERENCES');
}

/**
 * Asset ids as a list names them (the header's entries, or the exec envelope's `inputAssetReferences`): trimmed,
 * empty entries skipped, lower-cased, de-duplicated in order of first mention.
 *
 * @throws AppError INVALID_ARGUMENT for an entry that is not a UUID, naming `source`
 */
export function assetIds(entries: readonly string[], source: string): string[] {
  const ids = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (!UUID.test(entry)) {
      throw new AppError('INVALID_ARGUMENT', `${source}: '${entry.slice(0, 64)}' is not a UUID`);
    }
    ids.add(entry.toLowerCase());
  }
  return [...ids];
}

/**
 * Checks the assets an invocation names and returns their ids (what the worker is to deliver as
 * `NVCF-FUNCTION-ASSET-IDS`). Each must exist and hold uploaded bytes; with `owner` (the caller's
 * `principalKey`) it must also be the caller's own.
 *
 * @throws AppError INVALID_ARGUMENT (400, not a UUID), NOT_FOUND (404 `NotFound error: failed to find asset <id>`)
 */
export async function resolveAssetReferences(
  header: string | undefined,
  assets: Pick<AssetService, 'resolve'>,
  opts: { owner?: string } = {},
): Promise<string[]> {
  return resolveAssets(parseAssetReferences(header), assets, opts);
}

/** As resolveAssetReferences, for ids already parsed (see assetIds). */
export async function resolveAssets(
  ids: string[],
  assets: Pick<AssetService, 'resolve'>,
  opts: { owner?: string } = {},
): Promise<string[]> {
  if (ids.length === 0) return [];
  await assets.resolve(ids, opts.owner);
  return ids;
}
