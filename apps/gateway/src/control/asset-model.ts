import { buffer } from 'node:stream/consumers';
import { isZipArchive, readModelArchive, readOnnxSignature } from '@nvcf/models';
import { AppError } from '@nvcf/protocol';
import { assetObjectKey, type FunctionVersion } from '@nvcf/queue';
import { functionModelArchiveKey, functionModelName, functionModelObjectKey, type ObjectStore } from '@nvcf/storage';
import type { AssetService } from '../assets/index.ts';

/** `asset://<assetId>` in `models[0].uri`. */
export function assetIdOf(uri: string): string | undefined {
  return /^asset:\/\/([0-9a-f-]{36})$/i.exec(uri)?.[1]?.toLowerCase();
}

/**
 * Makes an uploaded `.onnx` asset the model of a new function version: checks it is an ONNX model with a
 * typed graph (a bad file is a 400 now, not a worker that fails later) and keeps a copy that outlives
 * the asset's TTL.
 */
export async function modelFromAsset(
  deps: { assets: AssetService; objects: ObjectStore; maxModelBytes: number },
  ownerSubject: string,
  assetId: string,
  versionId: string,
): Promise<FunctionVersion['model']> {
  const record = await deps.assets.get(ownerSubject, assetId);
  if (!record.uploadedAt)
    throw new AppError('INVALID_ARGUMENT', `Invalid request: asset '${assetId}' has not been uploaded`);
  if ((record.size ?? 0) > deps.maxModelBytes) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Invalid request: asset '${assetId}' is larger than ${deps.maxModelBytes} bytes`,
    );
  }
  const object = await deps.objects.get(assetObjectKey(assetId));
  if (!object) throw new AppError('NOT_FOUND', `NotFound error: failed to find asset ${assetId}`);
  const bytes = await buffer(object.body);
  // A zipped model directory (config.pbtxt, <version>/model.onnx, labels) or a bare .onnx file.
  const archive = isZipArchive(bytes) ? unpackOrRefuse(assetId, bytes, deps.maxModelBytes) : undefined;
  const version = archive?.versions.at(-1) ?? '1';
  const onnxBytes = archive ? (archive.files.get(`${version}/model.onnx`) as Buffer) : bytes;
  let signature: ReturnType<typeof readOnnxSignature>;
  try {
    signature = readOnnxSignature(onnxBytes);
  } catch (err) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Invalid request: asset '${assetId}' is not a usable ONNX model: ${(err as Error).message}`,
    );
  }
  const key = archive ? functionModelArchiveKey(versionId) : functionModelObjectKey(versionId);
  await deps.objects.put(key, bytes, { contentType: archive ? 'application/zip' : 'application/octet-stream' });
  return {
    name: functionModelName(versionId),
    version,
    platform: 'onnxruntime_onnx',
    inputs: signature.inputs,
    outputs: signature.outputs,
  };
}

function unpackOrRefuse(assetId: string, bytes: Buffer, maxBytes: number) {
  try {
    return readModelArchive(bytes, { maxBytes });
  } catch (err) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `Invalid request: asset '${assetId}' is not a usable model archive: ${(err as Error).message}`,
    );
  }
}
