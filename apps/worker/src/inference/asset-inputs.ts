import { buffer } from 'node:stream/consumers';
import { AppError } from '@nvcf/protocol';
import { assetObjectKey } from '@nvcf/queue';
import type { ObjectStore } from '@nvcf/storage';

/** The tensor parameter that names the asset holding an input's bytes. */
export const ASSET_PARAMETER = 'nvcf_asset_id';

interface JsonInput {
  name?: unknown;
  parameters?: Record<string, unknown>;
  [k: string]: unknown;
}

/**
 * Inputs bigger than a request body arrive as assets (nvcf-api.md §11): a KServe V2 JSON input may name
 * one with `"parameters": {"nvcf_asset_id": "<id>"}` instead of carrying `data`; the asset holds the
 * tensor's bytes in the binary tensor data layout (little-endian, row-major; BYTES with 4-byte length
 * prefixes). The request is rewritten into the binary extension's form, which the normal decoder reads.
 * Only assets the invocation referenced (`NVCF-INPUT-ASSET-REFERENCES`) may be used.
 *
 * @returns undefined when no input names an asset (nothing to do).
 */
export async function bindAssetInputs(
  json: unknown,
  referenced: ReadonlySet<string>,
  objects: ObjectStore,
): Promise<{ body: Buffer; headerLength: number } | undefined> {
  const inputs = (json as { inputs?: unknown } | null)?.inputs;
  if (!Array.isArray(inputs)) return undefined;
  if (!inputs.some((i: JsonInput) => typeof i?.parameters?.[ASSET_PARAMETER] === 'string')) return undefined;
  const blobs: Buffer[] = [];
  const out: unknown[] = [];
  for (const input of inputs as JsonInput[]) {
    const assetId = input?.parameters?.[ASSET_PARAMETER];
    if (typeof assetId !== 'string') {
      out.push(input);
      continue;
    }
    const id = assetId.toLowerCase();
    if (!referenced.has(id)) {
      throw new AppError(
        'INVALID_ARGUMENT',
        `input '${String(input.name)}': asset '${id}' is not in NVCF-INPUT-ASSET-REFERENCES`,
      );
    }
    const object = await objects.get(assetObjectKey(id));
    if (!object) throw new AppError('NOT_FOUND', `NotFound error: failed to find asset ${id}`);
    const bytes = await buffer(object.body);
    blobs.push(bytes);
    const { [ASSET_PARAMETER]: _named, ...parameters } = input.parameters ?? {};
    const { data: _data, ...rest } = input;
    out.push({ ...rest, parameters: { ...parameters, binary_data_size: bytes.length } });
  }
  const header = Buffer.from(JSON.stringify({ ...(json as object), inputs: out }));
  return { body: Buffer.concat([header, ...blobs]), headerLength: header.length };
}
