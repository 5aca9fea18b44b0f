import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { assetObjectKey, type FunctionModelSpec } from '@nvcf/control-store';
import { parseModelConfigText, readOnnxSignature } from '@nvcf/models';
import { AppError } from '@nvcf/protocol';
import {
  extractModelArchive,
  functionModelArchiveKey,
  functionModelName,
  functionModelObjectKey,
  looksLikeZip,
  type ModelArchiveLimits,
  type ObjectStore,
} from '@nvcf/storage';
import type { AssetService } from '../assets/index.ts';

/** `asset://<assetId>` in `models[0].uri`. */
export function assetIdOf(uri: string): string | undefined {
  return /^asset:\/\/([0-9a-f-]{36})$/i.exec(uri)?.[1]?.toLowerCase();
}

export interface AssetModelDeps {
  assets: AssetService;
  objects: ObjectStore;
  maxModelBytes: number;
  /** Bounds on what a zipped model directory may unpack to (a zip bomb is refused, not unpacked). */
  archiveLimits: ModelArchiveLimits;
}

/**
 * Makes an uploaded asset the model of a new function version: a bare `.onnx` file, or a zipped Triton
 * model directory (config.pbtxt, labels, `<version>/model.onnx`). Checks it is an ONNX model with a typed
 * graph (a bad file is a 400 now, not a worker that fails later) and keeps a copy that outlives the
 * asset's TTL. The asset must be `owner`'s (the creator's `principalKey`).
 */
export async function modelFromAsset(
  deps: AssetModelDeps,
  owner: string,
  assetId: string,
  versionId: string,
): Promise<FunctionModelSpec> {
  const record = await deps.assets.get(owner, assetId);
  if (!record.uploadedAt)
    throw new AppError('INVALID_ARGUMENT', `Invalid request: asset '${assetId}' has not been uploaded`);
  if ((record.size ?? 0) > deps.maxModelBytes) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Invalid request: asset '${assetId}' is larger than ${deps.maxModelBytes} bytes`,
    );
  }
  const { head, body } = await peek(await openAsset(deps.objects, assetId), 4);
  if (!looksLikeZip(head)) {
    const bytes = await buffer(body);
    const signature = signatureOf(assetId, bytes);
    await deps.objects.put(functionModelObjectKey(versionId), bytes, { contentType: 'application/octet-stream' });
    return modelOf(versionId, '1', signature);
  }
  // Unpacked on disk, never in memory: only the newest version's model.onnx is read, to check it.
  const staging = await mkdtemp(join(tmpdir(), 'nvcf-model-archive-'));
  try {
    const archive = await extractModelArchive(body, staging, deps.archiveLimits).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'INVALID_ARGUMENT') {
        throw new AppError(
          'INVALID_ARGUMENT',
          `Invalid request: asset '${assetId}' is not a usable model archive: ${err.message}`,
        );
      }
      throw err;
    });
    if (archive.files.includes('config.pbtxt')) {
      try {
        parseModelConfigText(await readFile(join(archive.dir, 'config.pbtxt'), 'utf8'), 'config.pbtxt');
      } catch (err) {
        throw new AppError(
          'INVALID_ARGUMENT',
          `Invalid request: asset '${assetId}' is not a usable model archive: config.pbtxt: ${(err as Error).message}`,
        );
      }
    }
    const version = archive.versions.at(-1) as string;
    const signature = signatureOf(assetId, await readFile(join(archive.dir, version, 'model.onnx')));
    // Workers unpack the archive with the same checks; the copy is the upload as it came.
    await deps.objects.put(
      functionModelArchiveKey(versionId),
      (await openAsset(deps.objects, assetId)).body,
      { contentType: 'application/zip' },
      { maxBytes: deps.maxModelBytes },
    );
    return modelOf(versionId, version, signature);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function openAsset(objects: ObjectStore, assetId: string) {
  const object = await objects.get(assetObjectKey(assetId));
  if (!object) throw new AppError('NOT_FOUND', `NotFound error: failed to find asset ${assetId}`);
  return object;
}

function signatureOf(assetId: string, onnx: Uint8Array): ReturnType<typeof readOnnxSignature> {
  try {
    return readOnnxSignature(onnx);
  } catch (err) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Invalid request: asset '${assetId}' is not a usable ONNX model: ${(err as Error).message}`,
    );
  }
}

function modelOf(
  versionId: string,
  version: string,
  signature: ReturnType<typeof readOnnxSignature>,
): FunctionModelSpec {
  return {
    name: functionModelName(versionId),
    version,
    platform: 'onnxruntime_onnx',
    inputs: signature.inputs,
    outputs: signature.outputs,
  };
}

/**
 * The first `n` bytes of an object (fewer when it is shorter), put back so that `body` still streams all
 * of it.
 */
async function peek(object: { body: Readable }, n: number): Promise<{ head: Buffer; body: Readable }> {
  const { body } = object;
  const seen: Buffer[] = [];
  let length = 0;
  while (length < n && !body.readableEnded) {
    const chunk = body.read() as Buffer | null;
    if (chunk) {
      seen.push(chunk);
      length += chunk.length;
    } else await readableOrEnd(body);
  }
  const head = Buffer.concat(seen);
  if (body.readableEnded) return { head, body: Readable.from([head], { objectMode: false }) };
  body.unshift(head);
  return { head: head.subarray(0, n), body };
}

function readableOrEnd(stream: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      stream.off('readable', settle);
      stream.off('end', settle);
      stream.off('error', settle);
      if (err) reject(err);
      else resolve();
    };
    stream.on('readable', settle);
    stream.on('end', settle);
    stream.on('error', settle);
  });
}
