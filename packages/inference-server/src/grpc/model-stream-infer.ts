import type { handleBidiStreamingCall, ServerDuplexStream } from '@grpc/grpc-js';
import {
  isServerFault,
  type ModelInferRequestMsg,
  type ModelInferResponseMsg,
  type ModelStreamInferResponseMsg,
  toGrpcError,
} from '@nvcf/kserve-grpc';
import type { Logger } from '@nvcf/service-kit';

type StreamCall = ServerDuplexStream<ModelInferRequestMsg, ModelStreamInferResponseMsg>;

/** A request's answer on the stream: one response, or (a decoupled model's) any number of them. */
export type StreamAnswer = ModelInferResponseMsg | AsyncIterable<ModelInferResponseMsg>;

export interface StreamInferOptions {
  /** Requests of one stream that may run at once; reading pauses beyond it. */
  maxInFlight: number;
  logger?: Logger | undefined;
}

/**
 * ModelStreamInfer: every request is answered on the stream, in the order the requests came, with either its
 * responses (one, or a decoupled model's several, each written as it is made) or an in-band `error_message` (a
 * failed request does not end the stream, as in Triton). Requests run concurrently up to `maxInFlight` so that one
 * stream can feed the model's instances; the stream ends after the client half-closes and the last answer is written.
 */
export function modelStreamInfer(
  infer: (request: ModelInferRequestMsg, call: StreamCall) => Promise<StreamAnswer>,
  opts: StreamInferOptions,
): handleBidiStreamingCall<ModelInferRequestMsg, ModelStreamInferResponseMsg> {
  return (call) => {
    let tail = Promise.resolve();
    let inFlight = 0;
    let paused = false;
    let clientDone = false;
    let closed = false;
    const close = () => {
      closed = true;
    };
    call.on('cancelled', close);
    call.on('error', close);
    call.on('end', () => {
      clientDone = true;
      if (inFlight === 0 && !closed) call.end();
    });
    const write = async (response: ModelStreamInferResponseMsg) => {
      if (!closed && !call.write(response)) await drained(call);
    };
    call.on('data', (msg: ModelInferRequestMsg) => {
      inFlight++;
      if (inFlight >= opts.maxInFlight && !paused) {
        paused = true;
        call.pause();
      }
      // Started now: a decoupled model's responses wait in its iterator while earlier answers are written.
      const answer = infer(msg, call);
      answer.catch(() => undefined);
      tail = tail.then(async () => {
        try {
          const settled = await answer;
          if (isIterable(settled)) {
            for await (const response of settled) await write({ error_message: '', infer_response: response });
          } else {
            await write({ error_message: '', infer_response: settled });
          }
        } catch (err) {
          if (isServerFault(err)) opts.logger?.error({ err, method: 'ModelStreamInfer' }, 'gRPC stream request failed');
          await write({ error_message: toGrpcError(err).details ?? 'Internal error', infer_response: null });
        }
        inFlight--;
        if (paused && inFlight < opts.maxInFlight) {
          paused = false;
          call.resume();
        }
        if (clientDone && inFlight === 0 && !closed) call.end();
      });
    });
  };
}

const isIterable = (answer: StreamAnswer): answer is AsyncIterable<ModelInferResponseMsg> =>
  Symbol.asyncIterator in answer;

/**
 * Responses made by a callback, read as an async iterator: the producer pushes and ends (or fails), the stream
 * writer pulls at its own pace. Unbounded: a decoupled request makes as many responses as its model says.
 */
export class ResponseQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #done = false;
  #error: unknown;
  #wake: (() => void) | undefined;

  push(item: T): void {
    this.#items.push(item);
    this.#wake?.();
  }
  end(): void {
    this.#done = true;
    this.#wake?.();
  }
  fail(err: unknown): void {
    this.#error = err ?? new Error('failed');
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.#done) {
        if (this.#error !== undefined) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }
}

/** Waits for the write buffer to drain, or for the call to go away (then nothing more is written). */
function drained(call: StreamCall): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const event of ['drain', 'cancelled', 'error', 'close', 'finish']) call.off(event, done);
      resolve();
    };
    for (const event of ['drain', 'cancelled', 'error', 'close', 'finish']) call.once(event, done);
  });
}
