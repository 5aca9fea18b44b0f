import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Function secrets at rest: AES-256-GCM (NIST SP 800-38D) with a random 96-bit IV per value and the value's
 * owner (its function version) as additional authenticated data, so a ciphertext copied to another version's key
 * fails to decrypt instead of handing one function's secrets to another.
 *
 * A ciphertext is `v1:<keyId>:<iv>:<tag>:<ciphertext>` (base64url parts). `keyId` names the key that made it,
 * so a key can be rotated: the new key encrypts, the previous one still decrypts what it made until everything
 * was written again under the new one.
 */
const FORMAT = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A ciphertext this process cannot open: its key is not configured here, or it was altered or moved. */
export class SecretDecryptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretDecryptError';
  }
}

export interface SecretCipher {
  /** The id of the key that encrypts (the second part of every ciphertext made now). */
  readonly keyId: string;
  /** Encrypts `plaintext`, bound to `aad`. */
  encrypt(plaintext: string, aad: string): string;
  /**
   * The plaintext of a ciphertext made for the same `aad`, under the current or the previous key.
   *
   * @throws SecretDecryptError
   */
  decrypt(ciphertext: string, aad: string): string;
  /** Whether a ciphertext was made with the current key (a rotation rewrites those that were not). */
  isCurrent(ciphertext: string): boolean;
}

/**
 * A key's public name: 8 hex digits of a SHA-256 over it (32 bits: enough to tell a few keys apart, nothing
 * about the 256-bit key).
 */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update('nvcf-secrets-key-id\0').update(key).digest('hex').slice(0, 8);
}

/**
 * @example
 * const cipher = createSecretCipher({ key: randomBytes(32) });
 * const sealed = cipher.encrypt('s3cr3t', 'function-a/version-1');
 * cipher.decrypt(sealed, 'function-a/version-1'); // 's3cr3t'
 * cipher.decrypt(sealed, 'function-b/version-1'); // throws SecretDecryptError
 */
export function createSecretCipher(opts: { key: Buffer; previousKey?: Buffer }): SecretCipher {
  const keys = new Map<string, Buffer>();
  for (const key of [opts.key, opts.previousKey]) {
    if (!key) continue;
    if (key.length !== 32) throw new Error('a secrets key is 32 bytes');
    keys.set(secretKeyId(key), key);
  }
  const keyId = secretKeyId(opts.key);

  return {
    keyId,
    encrypt(plaintext, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, opts.key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url'));
      return [FORMAT, keyId, ...parts].join(':');
    },
    decrypt(ciphertext, aad) {
      const [format, id, iv, tag, body, ...rest] = ciphertext.split(':');
      if (format !== FORMAT || id === undefined || iv === undefined || tag === undefined || body === undefined) {
        throw new SecretDecryptError('not a secrets ciphertext');
      }
      if (rest.length > 0) throw new SecretDecryptError('not a secrets ciphertext');
      const key = keys.get(id);
      if (!key) {
        throw new SecretDecryptError(
          `encrypted with key ${id}, which is neither NVCF_SECRETS_KEY nor NVCF_SECRETS_PREVIOUS_KEY here`,
        );
      }
      const tagBytes = Buffer.from(tag, 'base64url');
      if (tagBytes.length !== TAG_BYTES) throw new SecretDecryptError('not a secrets ciphertext');
      try {
        const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(aad, 'utf8'));
        decipher.setAuthTag(tagBytes);
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        // GCM's tag check failed: altered, or made for another owner. Node's own message says nothing more.
        throw new SecretDecryptError('the ciphertext failed authentication (altered, or not this version’s)');
      }
    },
    isCurrent: (ciphertext) => ciphertext.startsWith(`${FORMAT}:${keyId}:`),
  };
}
