import { AppError } from '@nvcf/protocol';

const tooLarge = (max: number) => new AppError('PAYLOAD_TOO_LARGE', `request body exceeds ${max} bytes`);

/**
 * Reads a request body of at most `maxBytes`. With a Content-Length the check happens before a byte is
 * read and the adapter's fast path buffers the body (no web stream); a chunked body is counted as it
 * streams in and refused as soon as it passes the limit.
 */
export async function readBodyWithin(req: Request, maxBytes: number): Promise<Buffer> {
  const declared = req.headers.get('content-length');
  if (declared !== null) {
    const length = Number(declared);
    if (!Number.isSafeInteger(length) || length < 0) throw new AppError('INVALID_ARGUMENT', 'invalid Content-Length');
    if (length > maxBytes) throw tooLarge(maxBytes);
    return Buffer.from(await req.arrayBuffer());
  }
  if (!req.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
