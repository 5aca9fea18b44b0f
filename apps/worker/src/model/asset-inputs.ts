import type { Readable } from 'node:stream';
import { assetObjectKey } from '@nvcf/control-store';
import {
  AppError,
  DATATYPE_BYTE_SIZE,
  DEFAULT_MAX_ELEMENTS,
  elementCount,
  formatShape,
  isDatatype,
} from '@nvcf/protocol';
import type { ObjectStore, StoredObject } from '@nvcf/storage';

/** The tensor parameter that names the asset holding an input's bytes. */
export const ASSET_PARAMETER = 'nvcf_asset_id';

interface JsonInput {
  name?: unknown;
  datatype?: unknown;
  shape?: unknown;
  parameters?: Record<string, unknown>;
  [k: string]: unknown;
}

/** An asset input whose object is open (headers read, no bytes yet) and whose size was checked. */
interface OpenAsset {
  input: JsonInput;
  object: StoredObject;
}

/**
 * The bytes the input's shape and datatype take in the binary tensor data layout, or, for BYTES
 * (variable length), the least they can take (a 4-byte length prefix per element).
 */
function declaredBytes(
  input: JsonInput,
  label: string,
  maxElements: number,
): { bytes: number; exact: boolean; what: string } {
  const { datatype, shape } = input;
  if (typeof datatype !== 'string' || !isDatatype(datatype)) {
    throw new AppError('INVALID_ARGUMENT', `${label}: an input read from an asset needs a valid 'datatype'`);
  }
  if (!Array.isArray(shape) || !shape.every((d): d is number => typeof d === 'number')) {
    throw new AppError('INVALID_ARGUMENT', `${label}: an input read from an asset needs a 'shape' of integers`);
  }
  const count = elementCount(shape, label, maxElements);
  const size = DATATYPE_BYTE_SIZE[datatype];
  const what = `shape ${formatShape(shape)} of ${datatype}`;
  return size === undefined ? { bytes: count * 4, exact: false, what } : { bytes: count * size, exact: true, what };
}

/** Fills `target` from `stream`, which must hold exactly `target.length` bytes. */
async function readExactly(stream: Readable, target: Buffer, label: string): Promise<void> {
  let at = 0;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    if (at + bytes.length > target.length) {
      stream.destroy();
      throw new AppError(
        'INVALID_ARGUMENT',
        `${label}: the asset changed while it was read (more bytes than its size)`,
      );
    }
    bytes.copy(target, at);
    at += bytes.length;
  }
  if (at !== target.length) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${label}: the asset changed while it was read (${at} of ${target.length} bytes)`,
    );
  }
}

/**
 * Inputs bigger than a request body arrive as assets (see the README's assets section): a KServe V2 JSON
 * input may name one with `"parameters": {"nvcf_asset_id": "<id>"}` instead of carrying `data`; the
 * asset holds the tensor's bytes in the binary tensor data layout (little-endian, row-major; BYTES with
 * 4-byte length prefixes). The request is rewritten into the binary extension's form, which the normal
 * decoder reads. Only assets the invocation referenced (`NVCF-INPUT-ASSET-REFERENCES`) may be used.
 *
 * Assets may be as large as the gateway allows (1 GiB by default), so nothing is read on trust: each
 * object's size (from the store, before its body is read) must match what the input's shape and
 * datatype take, and exactly that many bytes are then read, straight into the one buffer the decoder
 * gets.
 *
 * @returns undefined when no input names an asset (nothing to do).
 * @throws AppError INVALID_ARGUMENT (not referenced, no datatype/shape, size mismatch), NOT_FOUND
 */
export async function bindAssetInputs(
  json: unknown,
  referenced: ReadonlySet<string>,
  objects: ObjectStore,
  opts: { maxElements?: number } = {},
): Promise<{ body: Buffer; headerLength: number } | undefined> {
  const inputs = (json as { inputs?: unknown } | null)?.inputs;
  if (!Array.isArray(inputs)) return undefined;
  if (!inputs.some((i: JsonInput) => typeof i?.parameters?.[ASSET_PARAMETER] === 'string')) return undefined;
  const maxElements = opts.maxElements ?? DEFAULT_MAX_ELEMENTS;
  const opened: OpenAsset[] = [];
  try {
    const out: unknown[] = [];
    for (const input of inputs as JsonInput[]) {
      const assetId = input?.parameters?.[ASSET_PARAMETER];
      if (typeof assetId !== 'string') {
        out.push(input);
        continue;
      }
      const label = `input '${String(input.name)}'`;
      const id = assetId.toLowerCase();
      if (!referenced.has(id)) {
        throw new AppError('INVALID_ARGUMENT', `${label}: asset '${id}' is not in NVCF-INPUT-ASSET-REFERENCES`);
      }
      const want = declaredBytes(input, label, maxElements);
      const object = await objects.get(assetObjectKey(id));
      if (!object) throw new AppError('NOT_FOUND', `NotFound error: failed to find asset ${id}`);
      opened.push({ input, object });
      if (want.exact ? object.size !== want.bytes : object.size < want.bytes) {
        throw new AppError(
          'INVALID_ARGUMENT',
          `${label}: asset ${id} holds ${object.size} bytes, but ${want.what} takes ${want.exact ? '' : 'at least '}${want.bytes} bytes`,
        );
      }
      const { [ASSET_PARAMETER]: _named, ...parameters } = input.parameters ?? {};
      const { data: _data, ...rest } = input;
      out.push({ ...rest, parameters: { ...parameters, binary_data_size: object.size } });
    }
    const header = Buffer.from(JSON.stringify({ ...(json as object), inputs: out }));
    const body = Buffer.allocUnsafe(header.length + opened.reduce((n, a) => n + a.object.size, 0));
    header.copy(body);
    let at = header.length;
    for (const { input, object } of opened) {
      await readExactly(object.body, body.subarray(at, at + object.size), `input '${String(input.name)}'`);
      at += object.size;
    }
    return { body, headerLength: header.length };
  } finally {
    // Whatever was not read to its end (a refusal, a failed read) releases its file or connection.
    for (const { object } of opened) if (!object.body.destroyed) object.body.destroy();
  }
}
