import { AppError } from '@nvcf/protocol';

/**
 * Quota refusals are 403 (PERMISSION_DENIED), as the asset quota answers them, not 429: retrying never helps, only
 * deleting does (or an operator raising the quota), and the detail says which. One account at its quota leaves
 * every other account's room untouched.
 */
export const functionQuotaExceeded = (quota: number) =>
  new AppError(
    'PERMISSION_DENIED',
    `function quota exceeded: your account has ${quota} functions (the limit); delete one (DELETE /v2/nvcf/functions/{functionId}/versions/{versionId}) or ask the operator to raise FUNCTION_QUOTA_COUNT`,
  );

export const versionQuotaExceeded = (functionId: string, quota: number) =>
  new AppError(
    'PERMISSION_DENIED',
    `function version quota exceeded: function '${functionId}' has ${quota} versions (the limit); delete one or ask the operator to raise FUNCTION_VERSION_QUOTA_COUNT`,
  );

export const apiKeyQuotaExceeded = (ncaId: string, quota: number) =>
  new AppError(
    'PERMISSION_DENIED',
    `API key quota exceeded: account '${ncaId}' has ${quota} live keys (the limit); revoke one (DELETE /v2/nvcf/keys/{keyId}) or ask the operator to raise API_KEY_QUOTA_COUNT`,
  );
