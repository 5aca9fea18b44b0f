/** Never forwarded to a function: credentials, hop-by-hop names, and what the platform itself sets. */
const DROP = new Set([
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

/** Client headers a function may read (nvcf-api.md §4, §12.1); `nvcf-*` names cannot be spoofed. */
export function forwardedHeaders(headers: Headers): Record<string, string> {
  const listedInConnection = new Set(
    (headers.get('connection') ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    const n = name.toLowerCase();
    if (DROP.has(n) || listedInConnection.has(n) || n.startsWith('nvcf-')) return;
    out[n] = value;
  });
  return out;
}
