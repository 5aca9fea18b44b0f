import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretValues } from '@nvcf/control-store';

/** NVCF's name for it: a container reads its secrets from `/var/secrets/secrets.json` (NVCF docs: secrets). */
const SECRETS_FILE = 'secrets.json';

/**
 * Writes a sidecar's secrets as `<dir>/secrets.json` (`{"NAME": "value", …}`), readable by its owner only (mode
 * 0600). Written beside and renamed over, so a server reading it never sees half a file.
 */
export async function writeSecretsFile(dir: string, values: SecretValues): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const partial = join(dir, `.${SECRETS_FILE}.${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(partial, JSON.stringify(values), { mode: 0o600, flag: 'wx' });
    await rename(partial, join(dir, SECRETS_FILE));
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}

/** Removes it once the version is no longer served here. */
export async function removeSecretsFile(dir: string): Promise<void> {
  await rm(join(dir, SECRETS_FILE), { force: true });
}
