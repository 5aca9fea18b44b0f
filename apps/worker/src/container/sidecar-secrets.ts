import type { FunctionVersion } from '@nvcf/control-store';
import type { Logger } from '@nvcf/service-kit';
import { removeSecretsFile, writeSecretsFile } from './secrets-file.ts';
import { NO_SECRETS, type ReadSecrets } from './version-secrets.ts';

/** How a sidecar gets its version's secrets: its `secrets.json` in `dir` ('': it gets none). */
export interface SidecarSecrets {
  /** Writes the secrets, or warns that the sidecar gets none. */
  handOver(fv: FunctionVersion, secrets: ReadSecrets): Promise<void>;
  /** The version is no longer served here. */
  remove(): Promise<void>;
}

export function createSidecarSecrets(dir: string, log: Logger): SidecarSecrets {
  return {
    async handOver(fv, secrets) {
      if (dir) await writeSecretsFile(dir, secrets.values);
      else if (secrets.digest !== NO_SECRETS.digest) {
        log.warn(
          { versionId: fv.versionId },
          'the function has secrets, but this sidecar worker has no WORKER_SECRETS_DIR to hand them over in',
        );
      }
    },
    async remove() {
      if (dir) await removeSecretsFile(dir);
    },
  };
}
