import { type InvokeOptions, type InvokeResult, invokeFunction } from './invoke.ts';
import { type StreamEvent, type StreamOptions, streamFunction } from './stream.ts';
import { type ClientOptions, Transport } from './transport.ts';

/**
 * The NVCF API from TypeScript, with NVCF's rules built in (long polls, 202 → status polling, 302 result zips,
 * problem+json errors, Retry-After, Idempotency-Key). Runs in Node 24 and browsers (it needs only `fetch`).
 *
 * @example
 * const nvcf = new NvcfClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.NVCF_API_KEY });
 * const answer = await nvcf.invoke(functionId, { inputs: [...] });
 * console.log(answer.json());
 */
export class NvcfClient {
  readonly transport: Transport;

  constructor(opts: ClientOptions) {
    this.transport = new Transport(opts);
  }

  /** Invokes a function and waits for its answer (see invokeFunction). */
  invoke(functionId: string, body: unknown, opts?: InvokeOptions): Promise<InvokeResult> {
    return invokeFunction(this.transport, functionId, body, opts);
  }

  /** Invokes a function and iterates over its server-sent events (see streamFunction). */
  stream(functionId: string, body: unknown, opts?: StreamOptions): AsyncGenerator<StreamEvent, void, undefined> {
    return streamFunction(this.transport, functionId, body, opts);
  }
}
