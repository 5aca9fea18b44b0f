import { Worker } from 'node:worker_threads';
import { AppError, type Tensor } from '@nvcf/protocol';
import type { ModelSignature } from './model-signature.ts';
import { forTransfer } from './tensor-transfer.ts';
import type { FromInstance, InstanceThreadData, ThreadError, ToInstance } from './thread-messages.ts';

const SESSION_THREAD = new URL('./session-thread.ts', import.meta.url);

/** A run's outputs and how long the session took to make them. */
export interface ThreadRun {
  outputs: Tensor[];
  ms: number;
}

interface PendingRun {
  resolve(run: ThreadRun): void;
  reject(err: Error): void;
}

function fromThreadError(error: ThreadError): Error {
  return error.code ? new AppError(error.code, error.message) : new Error(error.message);
}

/**
 * The owner's side of one model instance (session-thread.ts): sends runs, matches answers, and notices the
 * thread dying, which fails the runs it held instead of leaving their callers waiting.
 */
export class InstanceThread {
  readonly signature: ModelSignature;
  readonly #worker: Worker;
  readonly #pending = new Map<number, PendingRun>();
  #nextId = 0;
  #gone: Error | undefined;
  #released: Promise<void> | undefined;
  readonly #exited: Promise<void>;
  readonly #onDeath: (err: Error) => void;

  private constructor(worker: Worker, signature: ModelSignature, onDeath: (err: Error) => void) {
    this.#worker = worker;
    this.signature = signature;
    this.#onDeath = onDeath;
    this.#exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (message: FromInstance) => this.#answer(message));
    worker.on('error', (err) => this.#die(new AppError('INTERNAL', `model instance failed: ${err.message}`)));
    worker.once('exit', (code) => this.#die(new AppError('UNAVAILABLE', `model instance stopped (exit code ${code})`)));
    // An idle instance does not keep the process alive; one with runs in flight does.
    worker.unref();
  }

  /** Starts a thread and its session; throws the session's load error. `onDeath` hears of a thread lost later. */
  static async start(data: InstanceThreadData, onDeath: (err: Error) => void = () => {}): Promise<InstanceThread> {
    const worker = new Worker(SESSION_THREAD, { workerData: data, name: `ort:${data.modelName}` });
    const signature = await new Promise<ModelSignature>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`model instance thread exited (code ${code}) while loading`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (message: FromInstance) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if (message.kind === 'ready') resolve(message.signature);
        else if (message.kind === 'load-failed') reject(fromThreadError(message.error));
        else reject(new Error(`model instance sent '${message.kind}' before it was ready`));
      });
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    return new InstanceThread(worker, signature, onDeath);
  }

  /** Runs in flight on this instance. */
  get load(): number {
    return this.#pending.size;
  }

  get alive(): boolean {
    return this.#gone === undefined && this.#released === undefined;
  }

  /** With `move`, inputs' sole-view buffers go to the thread (tensor-transfer.ts); otherwise they are copied. */
  run(inputs: Tensor[], fetches: string[], move: boolean): Promise<ThreadRun> {
    if (this.#gone) return Promise.reject(this.#gone);
    const id = ++this.#nextId;
    const moved = forTransfer(inputs, move);
    return new Promise<ThreadRun>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.ref();
      const message: ToInstance = { kind: 'run', id, inputs: moved.tensors, fetches };
      this.#worker.postMessage(message, moved.transfer);
    });
  }

  /** Lets the runs already sent finish, frees the session and ends the thread. */
  release(): Promise<void> {
    this.#released ??= (async () => {
      if (!this.#gone) {
        const message: ToInstance = { kind: 'release' };
        this.#worker.postMessage(message);
        this.#worker.ref();
      }
      await this.#exited;
    })();
    return this.#released;
  }

  #answer(message: FromInstance): void {
    if (message.kind === 'ran' || message.kind === 'run-failed') {
      const run = this.#pending.get(message.id);
      if (!run) return;
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if (message.kind === 'ran') run.resolve({ outputs: message.outputs, ms: message.ms });
      else run.reject(fromThreadError(message.error));
    }
  }

  #die(err: Error): void {
    if (this.#gone) return;
    this.#gone = err;
    for (const run of this.#pending.values()) run.reject(err);
    this.#pending.clear();
    if (this.#released === undefined) this.#onDeath(err);
  }
}
