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

export interface StreamInferOptions {
  /** Requests of one stream that may run at once; reading pauses beyond it. */
  maxInFlight: number;
  logger?: Logger | undefined;
}

/**
 * ModelStreamInfer: every request is answered on the stream, in the order the requests came, with
 * either `infer_response` or an in-band `error_message` (a failed request does not end the stream, as
 * in Triton). Requests run concurrently up to `maxInFlight` so that one stream can feed the model's
 * instances; the stream ends after the client half-closes and the last answer is written.
 */
export function modelStreamInfer(
  infer: (request: ModelInferRequestMsg, call: StreamCall) => Promise<ModelInferResponseMsg>,
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
    call.on('data', (msg: ModelInferRequestMsg) => {
      inFlight++;
      if (inFlight >= opts.maxInFlight && !paused) {
        paused = true;
        call.pause();
      }
      const answer = settle(infer, msg, call, opts.logger);
      tail = tail.then(async () => {
        const response = await answer;
        if (!closed && !call.write(response)) await drained(call);
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

async function settle(
  infer: (request: ModelInferRequestMsg, call: StreamCall) => Promise<ModelInferResponseMsg>,
  msg: ModelInferRequestMsg,
  call: StreamCall,
  logger: Logger | undefined,
): Promise<ModelStreamInferResponseMsg> {
  try {
    return { error_message: '', infer_response: await infer(msg, call) };
  } catch (err) {
    if (isServerFault(err)) logger?.error({ err, method: 'ModelStreamInfer' }, 'gRPC stream request failed');
    return { error_message: toGrpcError(err).details ?? 'Internal error', infer_response: null };
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
