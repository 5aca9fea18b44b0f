import type { FunctionRegistry, FunctionSecretStore } from '@nvcf/control-store';
import type { Logger } from '@nvcf/service-kit';

/**
 * Key rotation's second half (README: Secrets): with `NVCF_SECRETS_PREVIOUS_KEY` set, a starting gateway rewrites
 * every version's secrets that an older key encrypted under `NVCF_SECRETS_KEY`, so the previous key can then be
 * dropped. Every gateway may run it at once: a set is swapped only while it still holds what was read. One
 * version at a time, in the background: a start never waits for it.
 */
export async function reencryptSecrets(
  registry: FunctionRegistry,
  secrets: FunctionSecretStore,
  log: Logger,
): Promise<void> {
  let rewritten = 0;
  let failed = 0;
  for (const fv of await registry.list()) {
    try {
      if (await secrets.reencrypt({ functionId: fv.id, versionId: fv.versionId })) rewritten++;
    } catch (err) {
      failed++;
      log.warn({ err, functionId: fv.id, versionId: fv.versionId }, 'could not re-encrypt function secrets');
    }
  }
  log.info({ rewritten, failed }, 'function secrets re-encrypted under NVCF_SECRETS_KEY');
}
