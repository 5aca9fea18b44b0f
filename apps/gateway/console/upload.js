import { api } from './api.js';

/**
 * Uploads a file as an asset (create, then PUT to the signed URL the gateway hands out) and returns its id.
 * @param {File} file
 */
export async function uploadAsset(file) {
  const contentType = file.type || 'application/octet-stream';
  const description = file.name;
  /** @type {{ assetId: string, uploadUrl: string }} */
  const asset = await api('/v2/nvcf/assets', { method: 'POST', body: { contentType, description } });
  // The signed URL carries its own authority: no Authorization header, exactly these two headers.
  const put = await fetch(asset.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': contentType, 'x-amz-meta-nvcf-asset-description': description },
    body: file,
  });
  if (!put.ok) throw new Error(`Uploading ${file.name} failed: ${put.status}`);
  return asset.assetId;
}
