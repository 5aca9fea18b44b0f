import { createHash } from 'node:crypto';
import type { FunctionSecretStore, FunctionVersion, SecretValues } from '@nvcf/control-store';

/**
 * A version's secrets as this worker could read them: the values (and a digest that changes when they do, not
 * when they are only re-encrypted), or why not (no key here, or a key other than the one that encrypted them).
 */
export type VersionSecrets = ReadSecrets | { ok: false; reason: string };
/** Secrets that were read. */
export interface ReadSecrets {
  ok: true;
  values: SecretValues;
  digest: string;
}

const digestOf = (values: SecretValues) =>
  createHash('sha256')
    .update(JSON.stringify(Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))))
    .digest('hex');

/** Secrets that were read, with their digest. */
export const readSecrets = (values: SecretValues): ReadSecrets => ({ ok: true, values, digest: digestOf(values) });

/** No secrets. */
export const NO_SECRETS: ReadSecrets = readSecrets({});

/**
 * The secrets of each version, decrypted: read on every sync (a PUT reaches the worker through the deployment
 * change it announces, or the next periodic sync), one GET per version, sent together.
 */
export async function readVersionSecrets(
  store: FunctionSecretStore,
  versions: readonly FunctionVersion[],
): Promise<Map<string, VersionSecrets>> {
  const read = await Promise.all(
    versions.map(async (fv): Promise<VersionSecrets> => {
      try {
        const values = await store.read({ functionId: fv.id, versionId: fv.versionId });
        return Object.keys(values).length === 0 ? NO_SECRETS : readSecrets(values);
      } catch (err) {
        return { ok: false, reason: (err as Error).message };
      }
    }),
  );
  return new Map(versions.map((fv, i) => [fv.versionId, read[i] ?? NO_SECRETS]));
}
