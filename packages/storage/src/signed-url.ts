import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Presigned URLs served by our own HTTP servers (the S3 idea, simplified): the URL carries `expires`
 * (unix seconds) and `signature` = base64url(HMAC-SHA256(secret, canonical request)), where the
 * canonical request is the method, the path, the expiry and the values of the signed headers. Whoever
 * holds the URL may make exactly that request, with exactly those header values, until it expires.
 */

export type SigningSecret = string | Uint8Array;

export interface SignedRequest {
  method: string;
  /** The path as the verifying server routes it (no query, no public prefix of a reverse proxy). */
  path: string;
  /** Unix seconds after which the URL is refused. */
  expires: number;
  /** Header name → value the request must carry (absent and empty are the same). */
  headers?: Record<string, string | undefined>;
}

export interface SignUrlInput extends SignedRequest {
  /** Scheme, host and optional path prefix the URL is built on, e.g. `https://nvcf.example.com`. */
  baseUrl: string;
}

export interface VerifyInput {
  method: string;
  path: string;
  /** The `expires` and `signature` query parameters as received (absent: undefined or null). */
  expires: string | null | undefined;
  signature: string | null | undefined;
  /** The received values of the signed headers (every name that was signed, and only those). */
  headers?: Record<string, string | undefined>;
  /** Clock in milliseconds (tests). */
  now?: number;
}

export type SignedUrlCheck =
  | { ok: true; expires: number }
  | { ok: false; reason: 'missing' | 'invalid' | 'expired'; message: string };

const SIGNATURE = /^[A-Za-z0-9_-]{43}$/; // 32 bytes, base64url, unpadded
const EXPIRES = /^\d{1,12}$/;

/**
 * Header values are compared as HTTP carries them: surrounding whitespace is not part of a value, and a
 * Node server reads header bytes as Latin-1, so a UTF-8 value the client sent arrives mangled; it is
 * decoded back here (the signing side applies the same function, so it is a no-op there).
 */
export function canonicalHeaderValue(value: string | undefined): string {
  const v = (value ?? '').trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range test is the point
  if (!/[\u0080-\u00ff]/.test(v) || /[^\u0000-\u00ff]/.test(v)) return v;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(v, 'latin1'));
  } catch {
    return v;
  }
}

function canonicalRequest(req: SignedRequest): string {
  const headers = Object.entries(req.headers ?? {})
    .map(([name, value]) => [name.toLowerCase(), canonicalHeaderValue(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    // JSON quoting keeps values with separators or line breaks unambiguous.
    .map(([name, value]) => `${name}:${JSON.stringify(value)}`);
  return ['NVCF-HMAC-SHA256', req.method.toUpperCase(), req.path, String(req.expires), ...headers].join('\n');
}

function checkSecret(secret: SigningSecret): void {
  if (secret.length === 0) throw new Error('URL signing secret must not be empty');
}

/** The base64url HMAC of one request description. */
export function signRequest(secret: SigningSecret, req: SignedRequest): string {
  checkSecret(secret);
  if (!Number.isSafeInteger(req.expires) || req.expires < 0) throw new Error(`invalid expiry ${req.expires}`);
  return createHmac('sha256', secret).update(canonicalRequest(req)).digest('base64url');
}

/** `<baseUrl><path>?expires=<unix s>&signature=<base64url>`. */
export function signUrl(secret: SigningSecret, input: SignUrlInput): string {
  const signature = signRequest(secret, input);
  const base = input.baseUrl.replace(/\/+$/, '');
  return `${base}${input.path}?expires=${input.expires}&signature=${signature}`;
}

/**
 * Checks a received request against its signature, in constant time. A signature that does not match
 * (a changed path, method, expiry or header value, another secret) is `invalid`; a matching one past
 * its expiry is `expired`.
 */
export function verifySignedUrl(secret: SigningSecret, input: VerifyInput): SignedUrlCheck {
  checkSecret(secret);
  const { expires, signature } = input;
  if (!expires || !signature) {
    return { ok: false, reason: 'missing', message: 'the URL carries no expiry or signature' };
  }
  if (!EXPIRES.test(expires) || !SIGNATURE.test(signature)) {
    return { ok: false, reason: 'invalid', message: 'the URL signature does not match' };
  }
  const exp = Number(expires);
  const expected = signRequest(secret, {
    method: input.method,
    path: input.path,
    expires: exp,
    headers: input.headers,
  });
  // Compared as text, not decoded bytes: base64url decoding ignores the last character's spare bits.
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
    return { ok: false, reason: 'invalid', message: 'the URL signature does not match' };
  }
  if ((input.now ?? Date.now()) >= exp * 1000) {
    return { ok: false, reason: 'expired', message: 'the URL has expired' };
  }
  return { ok: true, expires: exp };
}
