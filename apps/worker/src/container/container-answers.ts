import type { EventStream, InvocationJob, InvocationResult } from '@nvcf/queue';
import { successResult } from '@nvcf/queue';
import { serverErrorResult } from './error-mapping.ts';
import { type InferenceResponse, readBody } from './inference-call.ts';
import type { SharedTicker } from './shared-ticker.ts';
import { relayEvents } from './sse-relay.ts';

/** The server's answer as the job's result; `relayed`: it went to the client as events already. */
export interface ServerAnswer {
  result: InvocationResult;
  relayed: boolean;
}

/**
 * Turns a server's answers into jobs' results, and knows which requests' answers are being relayed as events
 * right now (a failure then ends their stream).
 */
export class ContainerAnswers {
  readonly #events: EventStream;
  readonly #ticker: SharedTicker;
  /** Requests whose answer is being relayed as events right now. */
  readonly #streamed = new Set<string>();

  constructor(events: EventStream, ticker: SharedTicker) {
    this.#events = events;
    this.#ticker = ticker;
  }

  /**
   * The server's answer as the job's result: mapped errors, a stream relayed to a streaming client (`relayed`),
   * or the body whole (an event stream too, for a client that did not ask for one).
   */
  async answer(res: InferenceResponse, job: InvocationJob, abort: AbortController): Promise<ServerAnswer> {
    const contentType = String(res.headers['content-type'] ?? 'application/octet-stream');
    if (res.status >= 400) {
      return { result: serverErrorResult(res.status, await readBody(res.body), job.requestId), relayed: false };
    }
    if (job.stream && contentType.startsWith('text/event-stream')) {
      this.#streamed.add(job.requestId);
      await relayEvents(res.body, job.requestId, this.#events, abort, this.#ticker);
      const note = { id: job.requestId, streamed: true, detail: 'relayed as server-sent events' };
      return {
        result: successResult({ contentType: 'application/json', body: Buffer.from(JSON.stringify(note)) }),
        relayed: true,
      };
    }
    const body = await readBody(res.body);
    // Below 400, the server answered: its own status (a 2xx, a 3xx) goes to the client as it is.
    return {
      result: successResult({ status: res.status, contentType, body, headers: passedHeaders(res) }),
      relayed: false,
    };
  }

  /**
   * A streaming client's answer when the server did not stream: one event, then the end. A refusal is no
   * event at all: the gateway, still holding the response, answers it with its HTTP status.
   */
  async asEvent(requestId: string, result: InvocationResult): Promise<void> {
    if (result.ok) await this.#events.append(requestId, [{ data: result.body.toString('utf8'), last: true }]);
  }

  /** A failure as the job's answer; a stream that started ends with it as its last event. */
  async endStream(job: InvocationJob, failed: InvocationResult): Promise<InvocationResult> {
    if (job.stream && this.#streamed.has(job.requestId)) {
      await this.#events.append(job.requestId, [{ data: failed.body.toString('utf8'), last: true, error: true }]);
    }
    return failed;
  }

  /** The request's job is over. */
  done(requestId: string): void {
    this.#streamed.delete(requestId);
  }
}

/** Response headers of the server's that reach the client (NVCF: any headers): all but per-connection ones. */
function passedHeaders(res: InferenceResponse): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || SKIPPED_RESPONSE_HEADERS.has(name) || name.startsWith('nvcf-')) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const SKIPPED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-type',
  'date',
  'server',
  'trailer',
  'upgrade',
]);
