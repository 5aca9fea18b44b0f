import { describe, expect, it } from 'vitest';
import { canonicalHeaderValue, signRequest, signUrl, verifySignedUrl } from './signed-url.ts';

const SECRET = 'unit-test-secret-unit-test-secret';
const NOW = Date.UTC(2030, 0, 1);
const expires = NOW / 1000 + 35 * 60;
const path = '/v2/nvcf/assets/0b7c2f3e-6f4c-4a53-9f7e-2d1f7b7a1c55/upload';
const headers = { 'content-type': 'image/png', 'x-amz-meta-nvcf-asset-description': 'a cat' };

function parts(url: string) {
  const u = new URL(url);
  return { path: u.pathname, expires: u.searchParams.get('expires'), signature: u.searchParams.get('signature') };
}

const verify = (url: string, over: Partial<Parameters<typeof verifySignedUrl>[1]> = {}, secret = SECRET) =>
  verifySignedUrl(secret, { method: 'PUT', ...parts(url), headers, now: NOW, ...over });

describe('signed URLs', () => {
  const url = signUrl(SECRET, { baseUrl: 'https://nvcf.example.com/', method: 'PUT', path, expires, headers });

  it('builds an absolute URL carrying the expiry and a base64url signature', () => {
    expect(url).toMatch(
      new RegExp(`^https://nvcf\\.example\\.com${path}\\?expires=${expires}&signature=[A-Za-z0-9_-]{43}$`),
    );
    expect(parts(url).signature).toBe(signRequest(SECRET, { method: 'put', path, expires, headers }));
  });

  it('accepts the exact request until the expiry', () => {
    expect(verify(url)).toEqual({ ok: true, expires });
    expect(verify(url, { now: expires * 1000 - 1 })).toMatchObject({ ok: true });
    expect(verify(url, { now: expires * 1000 })).toMatchObject({ ok: false, reason: 'expired' });
    // Header names are case-insensitive, order does not matter, surrounding whitespace is not part of a value.
    expect(
      verify(url, { headers: { 'X-Amz-Meta-Nvcf-Asset-Description': ' a cat ', 'Content-Type': 'image/png' } }),
    ).toMatchObject({ ok: true });
  });

  it('refuses a URL signed with a past expiry', () => {
    const past = signUrl(SECRET, { baseUrl: 'http://h', method: 'PUT', path, expires: NOW / 1000 - 1, headers });
    expect(verify(past)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('refuses every tampered part', () => {
    const p = parts(url);
    const sig = p.signature!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of [flip(sig, 0), flip(sig, 20), flip(sig, 42), `${sig}A`, sig.slice(0, 42), '', '!'.repeat(43)]) {
      expect(verify(url, { signature: bad }).ok, bad).toBe(false);
    }
    expect(verify(url, { signature: flip(sig, 42) })).toMatchObject({ reason: 'invalid' });
    expect(verify(url, { expires: String(expires + 3600) })).toMatchObject({ ok: false, reason: 'invalid' });
    expect(verify(url, { expires: `${expires}.0` })).toMatchObject({ ok: false, reason: 'invalid' });
    expect(verify(url, { path: path.replace('0b7c', '0b7d') })).toMatchObject({ ok: false, reason: 'invalid' });
    expect(verify(url, { method: 'POST' })).toMatchObject({ ok: false, reason: 'invalid' });
    expect(verify(url, { headers: { ...headers, 'content-type': 'image/jpeg' } })).toMatchObject({
      ok: false,
      reason: 'invalid',
    });
    expect(verify(url, { headers: { ...headers, 'x-amz-meta-nvcf-asset-description': 'a dog' } })).toMatchObject({
      ok: false,
      reason: 'invalid',
    });
    expect(verify(url, { headers: { 'content-type': 'image/png' } })).toMatchObject({ ok: false, reason: 'invalid' });
    expect(verify(url, {}, 'another-secret-another-secret')).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('says when the signature or expiry is missing', () => {
    expect(verify(url, { signature: null })).toMatchObject({ ok: false, reason: 'missing' });
    expect(verify(url, { expires: undefined })).toMatchObject({ ok: false, reason: 'missing' });
  });

  it('keeps header values unambiguous and treats absent as empty', () => {
    const a = signRequest(SECRET, { method: 'PUT', path, expires, headers: { a: 'x\nb:y' } });
    const b = signRequest(SECRET, { method: 'PUT', path, expires, headers: { a: 'x', b: 'y' } });
    expect(a).not.toBe(b);
    const empty = signRequest(SECRET, { method: 'PUT', path, expires, headers: { d: '' } });
    expect(signRequest(SECRET, { method: 'PUT', path, expires, headers: { d: undefined } })).toBe(empty);
  });

  it('matches a UTF-8 header value that a Node server read as Latin-1', () => {
    const description = 'café ☕';
    const asReceived = Buffer.from(description, 'utf8').toString('latin1');
    expect(canonicalHeaderValue(asReceived)).toBe(description);
    expect(canonicalHeaderValue('café')).toBe('café'); // Latin-1 text that is not UTF-8 stays as it is
    const signed = signUrl(SECRET, { baseUrl: 'http://h', method: 'PUT', path, expires, headers: { d: description } });
    expect(verify(signed, { headers: { d: asReceived } })).toMatchObject({ ok: true });
  });

  it('refuses an empty secret and a bad expiry', () => {
    expect(() => signRequest('', { method: 'PUT', path, expires })).toThrow(/secret/);
    expect(() => signRequest(SECRET, { method: 'PUT', path, expires: 1.5 })).toThrow(/expiry/);
    expect(() => verifySignedUrl(new Uint8Array(), { method: 'PUT', path, expires: '1', signature: 'x' })).toThrow();
  });
});
