/**
 * One model instance: a worker thread holding one ONNX Runtime session. onnxruntime-node's `session.run`
 * occupies the calling thread for the whole inference, so it runs here and the worker's event loop (HTTP,
 * gRPC, health, job lease renewal) never waits on it; only runs measured tiny run there instead (inline-runs.ts).
 * Runs arrive one at a time from the instance's owner (instance-thread.ts); tensors come and go as transferred
 * buffers.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '@nvcf/protocol';
import * as ort from 'onnxruntime-node';
import { readModelSignature } from './model-signature.ts';
import { createSession, runSession } from './session-run.ts';
import { forTransfer } from './tensor-transfer.ts';
import type { FromInstance, InstanceThreadData, ThreadError, ToInstance } from './thread-messages.ts';

if (!parentPort) throw new Error('session-thread.ts runs as a worker thread');
const port = parentPort;
const data = workerData as InstanceThreadData;
const send = (message: FromInstance, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

function toThreadError(err: unknown): ThreadError {
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return { message: err instanceof Error ? err.message : String(err) };
}

async function main(): Promise<void> {
  // The process-wide level is fixed by the first session (provider-probe.ts); this keeps the thread's copy of it.
  ort.env.logLevel = 'fatal';
  let session: ort.InferenceSession;
  try {
    session = await createSession(data);
  } catch (err) {
    send({ kind: 'load-failed', error: toThreadError(err) });
    return;
  }
  send({ kind: 'ready', signature: readModelSignature(session) });

  // Runs are chained: the owner sends at most one at a time, and a release waits for the last one.
  let last: Promise<void> = Promise.resolve();
  port.on('message', (message: ToInstance) => {
    if (message.kind === 'run') {
      last = last.then(async () => {
        try {
          const timing = { ms: 0 };
          const outputs = await runSession(session, data.modelName, message.inputs, message.fetches, timing);
          const moved = forTransfer(outputs);
          send({ kind: 'ran', id: message.id, outputs: moved.tensors, ms: timing.ms }, moved.transfer);
        } catch (err) {
          send({ kind: 'run-failed', id: message.id, error: toThreadError(err) });
        }
      });
    } else {
      last = last.then(async () => {
        await session.release();
        send({ kind: 'released' });
        port.close();
      });
    }
  });
}

await main();
