import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretCipher, SecretDecryptError, secretKeyId } from './secret-cipher.ts';

const AAD = 'fn-1/v-1';

/** Flips one bit of one base64url part of a ciphertext (0: iv, 1: tag, 2: body). */
function tamper(ciphertext: string, part: 0 | 1 | 2): string {
  const parts = ciphertext.split(':');
  const bytes = Buffer.from(parts[2 + part] ?? '', 'base64url');
  bytes[0] = (bytes[0] ?? 0) ^ 1;
  parts[2 + part] = bytes.toString('base64url');
  return parts.join(':');
}

describe('the secret cipher (AES-256-GCM)', () => {
  const cipher = createSecretCipher({ key: randomBytes(32) });

  it('round-trips, with a fresh IV each time', () => {
    const text = JSON.stringify([{ name: 'API_KEY', value: 'sk-ü…✓' }]);
    const a = cipher.encrypt(text, AAD);
    const b = cipher.encrypt(text, AAD);
    expect(a).not.toBe(b);
    expect(a.split(':')[2]).not.toBe(b.split(':')[2]);
    expect(cipher.decrypt(a, AAD)).toBe(text);
    expect(cipher.decrypt(b, AAD)).toBe(text);
    expect(a).not.toContain('sk-');
    expect(a.startsWith(`v1:${cipher.keyId}:`)).toBe(true);
    expect(cipher.isCurrent(a)).toBe(true);
  });

  it('refuses a ciphertext bound to another owner (moved to another version)', () => {
    const sealed = cipher.encrypt('value', AAD);
    expect(() => cipher.decrypt(sealed, 'fn-1/v-2')).toThrow(SecretDecryptError);
  });

  it('refuses an altered IV, tag or body, and what is not a ciphertext', () => {
    const sealed = cipher.encrypt('value', AAD);
    for (const part of [0, 1, 2] as const) {
      expect(() => cipher.decrypt(tamper(sealed, part), AAD)).toThrow(/failed authentication/);
    }
    for (const bad of ['', 'value', 'v2:x:y:z:w', `${sealed}:extra`, sealed.replace(/:[^:]+:/, ':')]) {
      expect(() => cipher.decrypt(bad, AAD), bad).toThrow(SecretDecryptError);
    }
  });

  it('refuses another key’s ciphertext, naming the key id and never the key', () => {
    const other = createSecretCipher({ key: randomBytes(32) });
    const sealed = other.encrypt('value', AAD);
    expect(() => cipher.decrypt(sealed, AAD)).toThrow(new RegExp(`key ${other.keyId}`));
    expect(cipher.isCurrent(sealed)).toBe(false);
  });

  it('rotates: the previous key still decrypts, the new one encrypts', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = createSecretCipher({ key: oldKey }).encrypt('value', AAD);
    const rotating = createSecretCipher({ key: newKey, previousKey: oldKey });
    expect(rotating.keyId).toBe(secretKeyId(newKey));
    expect(rotating.isCurrent(before)).toBe(false);
    expect(rotating.decrypt(before, AAD)).toBe('value');
    const after = rotating.encrypt('value', AAD);
    expect(rotating.isCurrent(after)).toBe(true);
    expect(createSecretCipher({ key: newKey }).decrypt(after, AAD)).toBe('value');
  });

  it('takes 32-byte keys only', () => {
    expect(() => createSecretCipher({ key: randomBytes(16) })).toThrow(/32 bytes/);
  });
});
