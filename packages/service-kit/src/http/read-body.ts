import { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate, inflateRaw } from 'node:zlib';
import { AppError } from '@nvcf/protocol';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
const inflateRawAsync = promisify(inflateRaw);

const tooLarge = (max: number, what: string) => new AppError('PAYLOAD_TOO_LARGE', `${what} exceeds ${max} bytes`);

/**
 * Reads a request body of at most `maxBytes` and undoes its `Content-Encoding` (gzip or deflate), the
 * decompressed size held to the same limit (Triton HTTP server: request compression and
 * `--http-max-input-size`). With a Content-Length the check happens before a byte is read; a chunked body
 * is counted as it streams in.
 *
 * @throws AppError PAYLOAD_TOO_LARGE (body or inflated body over the limit), INVALID_ARGUMENT (an
 *   undecodable compressed body, a bad Content-Length, or an encoding other than
 *   gzip, deflate or identity), CANCELLED (the client went away before the whole body came).
 */
export async function readRequestBody(req: Request, maxBytes: number, incoming?: IncomingMessage): Promise<Buffer> {
  const encoding = contentEncoding(req.headers.get('content-encoding'));
  const raw = await readWithin(req, maxBytes, incoming);
  if (encoding === 'identity' || raw.length === 0) return raw;
  return decompress(raw, encoding, maxBytes);
}

type Encoding = 'identity' | 'gzip' | 'deflate';

function contentEncoding(header: string | null): Encoding {
  const value = header?.trim().toLowerCase() ?? '';
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  if (value === 'deflate') return 'deflate';
  throw new AppError('INVALID_ARGUMENT', `unsupported Content-Encoding '${header}' (supported: gzip, deflate)`);
}

/**
 * The Node request behind a Hono context's `env` when @hono/node-server serves it (its `HttpBindings`), for
 * `readRequestBody`'s copy-once path; undefined under any other server, or in `app.request()` tests.
 */
export function nodeIncoming(env: unknown): IncomingMessage | undefined {
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  return env.incoming instanceof IncomingMessage ? env.incoming : undefined;
}

async function readWithin(req: Request, maxBytes: number, incoming: IncomingMessage | undefined): Promise<Buffer> {
  const declared = req.headers.get('content-length');
  if (declared !== null) {
    const length = Number(declared);
    if (!/^\d+$/.test(declared.trim()) || !Number.isSafeInteger(length)) {
      throw new AppError('INVALID_ARGUMENT', 'invalid Content-Length');
    }
    if (length > maxBytes) throw tooLarge(maxBytes, 'request body');
    if (incoming && !incoming.readableDidRead) return readIncoming(incoming, length);
    // @hono/node-server buffers a Content-Length body without building a web stream.
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
      throw tooLarge(maxBytes, 'request body');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/**
 * Copies each chunk of a Content-Length body into one buffer of that length as it arrives. Through the web
 * Request, @hono/node-server concatenates the chunks and then copies the result into an ArrayBuffer of its
 * own: two more copies of every body, each an allocation outside V8's heap that V8 answers with full garbage
 * collections (tensor bodies of hundreds of KB made one every 30–150 ms in the worker). Node's parser never
 * delivers more than Content-Length.
 *
 * A client may send its whole body and close at once (a retry after a dropped connection does): Node then
 * aborts the request but keeps what it parsed readable, and that body is whole and accepted. A body that ends
 * short is a client that went away.
 */
function readIncoming(incoming: IncomingMessage, length: number): Promise<Buffer> {
  if (length === 0) return Promise.resolve(Buffer.alloc(0));
  const body = Buffer.allocUnsafeSlow(length);
  let at = 0;
  const take = (chunk: Buffer) => {
    at += chunk.copy(body, at);
  };
  const cutShort = () => new AppError('CANCELLED', 'client closed the connection before the whole request body came');
  const whole = (): boolean => {
    if (incoming.complete) {
      for (let chunk: unknown = incoming.read(); Buffer.isBuffer(chunk); chunk = incoming.read()) take(chunk);
    }
    return at === length;
  };
  if (incoming.readableAborted) return whole() ? Promise.resolve(body) : Promise.reject(cutShort());
  return new Promise<Buffer>((resolve, reject) => {
    const done = (ok: boolean) => {
      incoming.off('data', take).off('end', onEnd).off('error', onGone).off('close', onGone);
      if (ok) resolve(body);
      else reject(cutShort());
    };
    const onEnd = () => done(at === length);
    const onGone = () => done(whole());
    incoming.on('data', take).once('end', onEnd).once('error', onGone).once('close', onGone);
  });
}

/**
 * `maxOutputLength` makes zlib stop as soon as the output passes the limit, so a small body that inflates
 * to gigabytes (a zip bomb) costs at most `maxBytes` of memory.
 */
async function decompress(raw: Buffer, encoding: 'gzip' | 'deflate', maxBytes: number): Promise<Buffer> {
  const options = { maxOutputLength: Math.max(1, maxBytes) };
  try {
    if (encoding === 'gzip') return await gunzipAsync(raw, options);
    // HTTP "deflate" is the zlib format (RFC 9110 §8.4.1.2); some clients send a bare deflate stream.
    return await (hasZlibHeader(raw) ? inflateAsync(raw, options) : inflateRawAsync(raw, options));
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes, 'decompressed request body');
    throw new AppError('INVALID_ARGUMENT', `request body is not valid ${encoding} data: ${(err as Error).message}`);
  }
}

function hasZlibHeader(b: Buffer): boolean {
  const cmf = b[0] ?? 0;
  const flg = b[1] ?? 0;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}
