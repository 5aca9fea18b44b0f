import type { Keys, RedisClient } from '@nvcf/queue';
import { z } from 'zod';
import type { SecretCipher } from './secret-cipher.ts';

/** A function version's secrets: name → value (names as NVCF's SecretDto allows them, so never `__proto__`). */
export type SecretValues = Readonly<Record<string, string>>;

/** The plaintext inside a version's ciphertext: the set as pairs, in the order given. */
const SecretPairs = z.array(z.object({ name: z.string(), value: z.string() }));

/** Which version a set belongs to: both ids are bound into its ciphertext. */
export interface VersionRef {
  functionId: string;
  versionId: string;
}

export interface FunctionSecretStore {
  /** Whether a key is configured: without one nothing can be written or read, only deleted. */
  readonly enabled: boolean;
  /** Replaces the version's whole set (NVCF's updateSecrets); an empty set deletes it. */
  replace(ref: VersionRef, secrets: SecretValues): Promise<void>;
  /**
   * The version's secrets, decrypted; empty when it has none.
   *
   * @throws SecretDecryptError when they were encrypted with a key this process lacks, or were altered
   */
  read(ref: VersionRef): Promise<SecretValues>;
  /** Deletes the version's secrets (with the version). Needs no key. */
  remove(versionId: string): Promise<void>;
  /**
   * Rewrites the version's set under the current key when an older key made it (key rotation). A set replaced
   * meanwhile is left as it is. True when it rewrote it.
   */
  reencrypt(ref: VersionRef): Promise<boolean>;
}

/** What binds a ciphertext to its version: decrypting it under another version's key fails. */
const aadOf = (ref: VersionRef) => `nvcf-function-secrets/${ref.functionId}/${ref.versionId}`;

/**
 * Sets the key to ARGV[2] only while it still holds ARGV[1] (the set a rotation read): a PUT that replaced it
 * meanwhile wins. KEYS[1] functionSecrets(versionId); ARGV[1] the old ciphertext, ARGV[2] the new one.
 */
const SWAP = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

/**
 * Function secrets, encrypted at rest (secret-cipher.ts): one ciphertext per version, the whole set as JSON, in
 * the version's hash slot. Without a cipher (no `NVCF_SECRETS_KEY`) the store holds nothing new: writing or
 * reading throws, deleting works.
 */
export function createFunctionSecretStore(
  redis: RedisClient,
  keys: Keys,
  cipher: SecretCipher | undefined,
): FunctionSecretStore {
  const need = (): SecretCipher => {
    if (!cipher) throw new Error('function secrets need NVCF_SECRETS_KEY');
    return cipher;
  };
  const seal = (c: SecretCipher, ref: VersionRef, secrets: SecretValues): string =>
    c.encrypt(JSON.stringify(Object.entries(secrets).map(([name, value]) => ({ name, value }))), aadOf(ref));
  const open = (c: SecretCipher, ref: VersionRef, sealed: string): SecretValues => {
    const pairs = SecretPairs.parse(JSON.parse(c.decrypt(sealed, aadOf(ref))));
    return Object.fromEntries(pairs.map((p) => [p.name, p.value]));
  };

  return {
    enabled: cipher !== undefined,
    async replace(ref, secrets) {
      const key = keys.functionSecrets(ref.versionId);
      if (Object.keys(secrets).length === 0) await redis.del(key);
      else await redis.set(key, seal(need(), ref, secrets));
    },
    async read(ref) {
      const sealed = await redis.get(keys.functionSecrets(ref.versionId));
      if (sealed === null) return {};
      return open(need(), ref, sealed);
    },
    async remove(versionId) {
      await redis.del(keys.functionSecrets(versionId));
    },
    async reencrypt(ref) {
      const c = need();
      const key = keys.functionSecrets(ref.versionId);
      const sealed = await redis.get(key);
      if (sealed === null || c.isCurrent(sealed)) return false;
      return (await redis.eval(SWAP, 1, key, sealed, seal(c, ref, open(c, ref, sealed)))) === 1;
    },
  };
}
