import type { ErrorCode, Tensor } from '@nvcf/protocol';
import type { ModelSignature } from './model-signature.ts';

/** What an instance thread is started with (`workerData`): the one session it holds. */
export interface InstanceThreadData {
  /** For error messages. */
  modelName: string;
  modelPath: string;
  /** onnxruntime-node's provider name ('cpu', 'cuda', ...). */
  ortProvider: string;
  intraOpNumThreads: number;
  interOpNumThreads: number;
}

/** An error as it crosses the thread boundary: AppErrors keep their code, others their message. */
export interface ThreadError {
  code?: ErrorCode;
  message: string;
}

export type ToInstance =
  | { kind: 'run'; id: number; inputs: Tensor[]; fetches: string[] }
  /** Frees the session once the runs already sent have finished, then the thread exits. */
  | { kind: 'release' };

export type FromInstance =
  | { kind: 'ready'; signature: ModelSignature }
  | { kind: 'load-failed'; error: ThreadError }
  /** `ms`: how long the session's run took, for the owner's choice of where small runs go (inline-runs.ts). */
  | { kind: 'ran'; id: number; outputs: Tensor[]; ms: number }
  | { kind: 'run-failed'; id: number; error: ThreadError }
  | { kind: 'released' };
