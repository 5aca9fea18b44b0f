/** Never forwarded to a function, even when listed: credentials, hop-by-hop names, what the platform sets. */
const NEVER = new Set([
  'authorization',
  'cookie',
  'host',
  'content-length',
  'content-type',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * What an ONNX function reads of its caller's headers: the binary tensor extension's JSON length, and
 * what the caller accepts. Everything else a client sends stays out of the job (it would be persisted
 * in Redis with it: a client's `x-secret-token` sat in the queue before this list existed).
 */
export const DEFAULT_FORWARDED_HEADERS: readonly string[] = ['inference-header-content-length', 'accept'];

/**
 * The names a model function may read: the default list plus the operator's `extra` names (`FORWARD_HEADERS`),
 * lower case, each once. Made once at start-up and handed to `forwardedHeaders` with every request.
 */
export function forwardedHeaderNames(extra: Iterable<string> = []): readonly string[] {
  return [...new Set([...DEFAULT_FORWARDED_HEADERS, ...[...extra].map((n) => n.toLowerCase())])];
}

const DEFAULT_NAMES = forwardedHeaderNames();

/**
 * The client headers a function may read: those of `names` (`forwardedHeaderNames`), never credentials, hop-by-hop
 * names, names listed in `Connection`, or `nvcf-*` (the platform sets those and clients must not spoof them).
 * `'all'`: every other header, as a container function receives them (NVCF container functions: client headers are
 * forwarded to the inference server).
 */
export function forwardedHeaders(
  headers: Headers,
  names: readonly string[] | 'all' = DEFAULT_NAMES,
): Record<string, string> {
  const listedInConnection = new Set(
    (headers.get('connection') ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const forwarded = (name: string) => !NEVER.has(name) && !listedInConnection.has(name) && !name.startsWith('nvcf-');
  const out: Record<string, string> = {};
  if (names === 'all') {
    headers.forEach((value, name) => {
      const n = name.toLowerCase();
      if (forwarded(n)) out[n] = value;
    });
    return out;
  }
  // Looked up by name: walking every header of a web `Headers` sorts them first, which cost more than the rest
  // of this function on a small pexec.
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null && forwarded(name)) out[name] = value;
  }
  return out;
}
