import { Readable } from 'node:stream';
import type { Logger } from '@nvcf/service-kit';

/**
 * A Node `Readable` (a file, an S3 object) as a `Response` body.
 *
 * `Readable.toWeb` is the conversion: handing the Node stream itself to `new Response()` made undici
 * wrap it as an async iterable whose byte stream it closed a second time after a client that had read
 * the whole body hung up (`ERR_INVALID_STATE: ReadableStream is already closed`), an uncaught error that
 * stopped the gateway on the first `curl -o` of a result. With the web stream, a client that leaves
 * early cancels it, which destroys the source and closes its file handle or connection.
 *
 * A source that fails mid-body ends that one response (the server destroys the socket, so the client
 * sees a short body, never a complete-looking one) and is logged with `context` (the request id).
 */
export function readableBody(source: Readable, log: Logger, context: Record<string, unknown>): ReadableStream {
  source.once('error', (err) => log.warn({ err, ...context }, 'response body failed mid-stream'));
  return Readable.toWeb(source);
}
