import type {
  CompletionWaiter,
  IdempotencyStore,
  InvocationInput,
  InvocationJob,
  InvocationProducer,
  InvocationResult,
  RequestStore,
  SequenceRouter,
  Waiter,
} from '@nvcf/queue';
import type { FunctionResolver } from './function-resolver.ts';
import type { IdempotentCall } from './idempotency-key.ts';
import { createInvocationEnqueue } from './invocation-enqueue.ts';
import {
  answerStatus,
  createInvocationEvents,
  type InvocationEventName,
  type InvocationEvents,
} from './invocation-events.ts';
import { createJobAdmission } from './job-admission.ts';
import type { QueueGuard } from './queue-guard.ts';
import { createRequestWaits } from './request-waits.ts';

/** What authorization is shown of an existing request. */
export interface RequestAccess {
  requestId: string;
  functionId: string;
  versionId: string;
  principal: string;
}

/** What a pexec call or a status poll ends with. */
export type InvocationOutcome =
  | { kind: 'result'; requestId: string; result: InvocationResult }
  | { kind: 'pending'; requestId: string; percent: number; partial?: Buffer }
  | { kind: 'unknown'; requestId: string };

export interface InvokeRequest {
  /** Who invokes (`principalKey`): the request's status, stream and position are theirs. */
  principal: string;
  /** The caller's account: only versions it owns or is authorized for are invoked (the resolver's rule). */
  ncaId: string;
  functionId: string;
  versionId?: string;
  input: InvocationInput;
  headers: Record<string, string>;
  /**
   * Every client header a container function receives (NVCF forwards all but credentials and hop-by-hop
   * names to a container); absent: `headers`, which model functions get. Read only for a container function.
   */
  containerHeaders?: () => Record<string, string>;
  /** Assets the caller referenced, resolved and authorized. */
  assetIds?: string[];
  pollSeconds: number;
  /** Aborts when the client goes away: the wait ends, the request itself keeps running. */
  signal?: AbortSignal;
  /** The caller cannot follow a redirect to a stored result (gRPC). */
  directOnly?: boolean;
  /** How the worker renders a success (InvocationJob.respond); absent: as the function's HTTP response. */
  respond?: InvocationJob['respond'];
  /** `Idempotency-Key`: a retry of the same call finds the request the first one started. */
  idempotency?: IdempotentCall;
  /**
   * The body as received, when there is one: a large input is stored as these bytes, and an `entry` input's are
   * these. For a `kserve` input, its tensors' bytes.
   */
  body?: Buffer;
}

export interface InvocationService {
  /** What becomes of the requests this service handles (see `InvocationEventMap`): metrics, traces and logs listen. */
  readonly events: InvocationEvents;
  invoke(req: InvokeRequest): Promise<InvocationOutcome>;
  /**
   * Starts an invocation whose answer is read as events (SSE): it is queued with `stream` set, and the
   * caller reads the request's event stream. The waiter, registered before the add as for `invoke`,
   * settles at completion or at the window's end.
   */
  startStream(req: InvokeRequest): Promise<{ requestId: string; waiter: Waiter }>;
  /**
   * The client has `result`, the answer of `requestId` (its response was written): it is handed out once,
   * the id answers 404 from now on. Failures are reported to `onBackgroundError`, never thrown.
   */
  delivered(requestId: string, result: InvocationResult): Promise<void>;
  /**
   * An event stream handed the answer out itself (it took the stored answer, or wrote it as its HTTP answer):
   * reported as `delivered` is; the stream marks the record.
   */
  reportDelivered(requestId: string, result: InvocationResult, streamed: boolean): void;
  /**
   * Follows an existing request as events (SSE on a status poll, from any gateway). `authorize` is shown the
   * request first, as for `status`; undefined when it may not be followed (answered as an unknown request).
   */
  follow(
    requestId: string,
    pollSeconds: number,
    opts: { signal?: AbortSignal; authorize: (request: RequestAccess) => Promise<boolean> },
  ): Promise<Waiter | undefined>;
  /**
   * Long-polls a request. `authorize` is shown the request's function and principal before anything is
   * read (false: answered as an unknown request; or it throws), so a caller who may not see a request cannot
   * consume its result, nor tell it from one that does not exist.
   */
  status(
    requestId: string,
    pollSeconds: number,
    opts: { signal?: AbortSignal; authorize: (request: RequestAccess) => Promise<boolean> },
  ): Promise<InvocationOutcome>;
}

export interface InvocationDeps {
  functions: FunctionResolver;
  queueGuard: QueueGuard;
  store: RequestStore;
  producer: InvocationProducer;
  completions: CompletionWaiter;
  idempotency: IdempotencyStore;
  /** Inputs larger than this travel beside their job (in the request store), not inside it. */
  maxJobInputBytes: number;
  /** Results up to this size come back inline on the gateway's reply channel. */
  maxInlineResultBytes: number;
  /** Where a sequence model's request goes (its sequence's worker); absent: always the shared queue. */
  sequences?: SequenceRouter;
  /**
   * The caller's trace context (its active span) as W3C fields, carried inside the job so the worker's spans join
   * the invocation's trace; absent, or answering undefined (tracing off): the job carries none.
   */
  traceContext?: () => InvocationJob['trace'];
  /** Failures of work done after the response (marking an inline result delivered). */
  onBackgroundError: (err: unknown, requestId: string) => void;
  /** A listener of `events` threw: the invocation goes on regardless. */
  onEventError: (err: unknown, event: InvocationEventName) => void;
}

/**
 * The invocation path: resolve the version, record the request, register the completion waiter,
 * enqueue, then long-poll for the result. Request state lives in Redis, so any gateway replica can
 * answer a later status poll. Composed of the waits (request-waits.ts), the admission and add of a job
 * (job-admission.ts) and the enqueue with its idempotency claims (invocation-enqueue.ts), all reporting to
 * one list of lifecycle events.
 */
export function createInvocationService(deps: InvocationDeps): InvocationService {
  const { store, onBackgroundError } = deps;
  const events = createInvocationEvents(deps.onEventError);
  const waits = createRequestWaits(deps.completions, store, events);
  const admission = createJobAdmission(deps, events);
  const { enqueue } = createInvocationEnqueue({ ...deps, admission, waits });

  return {
    events,

    async invoke(req) {
      const started = await enqueue(req, false);
      if ('existing' in started) return waits.poll(started.existing, req.pollSeconds, req.signal);
      return waits.settle(started.requestId, started.waiter);
    },

    async startStream(req) {
      const started = await enqueue(req, true);
      if (!('existing' in started)) return started;
      const requestId = started.existing;
      return { requestId, waiter: waits.register(requestId, req.pollSeconds, req.signal) };
    },

    delivered(requestId, result) {
      events.emit('delivered', { requestId, status: answerStatus(result), streamed: false });
      return store.markDelivered(requestId).catch((err: unknown) => onBackgroundError(err, requestId));
    },

    reportDelivered(requestId, result, streamed) {
      events.emit('delivered', { requestId, status: answerStatus(result), streamed });
    },

    follow: waits.follow,
    status: waits.status,
  };
}
