import type { FunctionVersion } from '@nvcf/control-store';
import { AppError } from '@nvcf/protocol';
import type {
  CompletionWaiter,
  IdempotencyStore,
  InvocationInput,
  InvocationJob,
  InvocationProducer,
  InvocationResult,
  RequestOwner,
  RequestStore,
  RequestView,
  Waiter,
} from '@nvcf/queue';
import { isRedisUnavailable, newRequestId, type SequenceRouter, sequenceFlagsOf } from '@nvcf/queue';
import type { FunctionResolver } from './function-resolver.ts';
import type { IdempotentCall } from './idempotency-key.ts';
import {
  answerStatus,
  createInvocationEvents,
  type InvocationEventName,
  type InvocationEvents,
} from './invocation-events.ts';
import { type QueueGuard, queueBytesRefusal } from './queue-guard.ts';

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

/** What a read of the request store means to a caller. */
function outcomeOf(requestId: string, view: RequestView): InvocationOutcome {
  if (view.kind === 'result') return { kind: 'result', requestId, result: view.result };
  if (view.kind === 'pending') {
    return { kind: 'pending', requestId, percent: view.percent, ...(view.partial ? { partial: view.partial } : {}) };
  }
  return { kind: 'unknown', requestId };
}

/**
 * The invocation path: resolve the version, record the request, register the completion waiter,
 * enqueue, then long-poll for the result. Request state lives in Redis, so any gateway replica can
 * answer a later status poll.
 */
export function createInvocationService(deps: InvocationDeps): InvocationService {
  const { functions, store, producer, completions, onBackgroundError } = deps;
  const events = createInvocationEvents(deps.onEventError);

  /** Registers a waiter; a completion reaching it is reported (`completed`) at the moment it arrives. */
  function register(requestId: string, pollSeconds: number, signal?: AbortSignal): Waiter {
    const waiter = completions.register(requestId, Date.now() + pollSeconds * 1000, signal);
    void waiter.outcome.then((o) => {
      if (o.kind === 'completed') events.emit('completed', { requestId, at: Date.now() });
    });
    return waiter;
  }

  /** Reads who a request belongs to, reporting that a client here takes it up (`followed`). */
  async function ownerOf(requestId: string): Promise<RequestOwner | undefined> {
    const owner = await store.owner(requestId);
    if (owner) events.emit('followed', { requestId, functionId: owner.functionId, versionId: owner.versionId });
    return owner;
  }

  /**
   * Waits, then reads once. A result that came inline needs no read. Nothing is marked delivered here:
   * the caller does that (`delivered`) once the client has the answer, so a connection that drops while
   * the answer is written loses nothing (the client polls again).
   */
  async function settle(requestId: string, waiter: Waiter): Promise<InvocationOutcome> {
    const outcome = await waiter.outcome;
    if (outcome.kind === 'aborted') return { kind: 'pending', requestId, percent: 0 };
    if (outcome.kind === 'completed' && outcome.result) return { kind: 'result', requestId, result: outcome.result };
    return outcomeOf(requestId, await store.peek(requestId));
  }

  /**
   * Queues a new request, or — for a retry carrying the `Idempotency-Key` of an earlier call — finds the
   * request that call started (`existing`), so the function never runs twice for one call.
   */
  async function enqueue(
    req: InvokeRequest,
    stream: boolean,
  ): Promise<{ requestId: string; waiter: Waiter } | { existing: string }> {
    const { fv } = await functions.resolve(req.functionId, req.versionId, req.ncaId);
    // Its first digits are the version's: the request's records shard with its queue (keys.ts).
    const requestId = newRequestId(fv.versionId);
    const idem = req.idempotency;
    if (idem) {
      const existing = await claimKey(req, idem, requestId);
      if (existing) return { existing };
    }
    // Registered before the add: a fast worker can publish the completion before `enqueue` returns.
    const waiter = register(requestId, req.pollSeconds, req.signal);
    try {
      await queue(req, fv, requestId, stream);
    } catch (err) {
      waiter.settle({ kind: 'aborted' });
      // Refused (a full queue, say): nothing started, a retry with the same key may start it. Redis
      // failing mid-way is another matter: the request may have been queued after all, so the key
      // stays claimed (for a short while only, see the idempotency store) rather than invite a rerun.
      if (idem && !isRedisUnavailable(err)) {
        await deps.idempotency.release(req.principal, idem.key, idem.fingerprint, requestId).catch(() => {});
      }
      throw queueBytesRefusal(err);
    }
    if (idem) {
      await deps.idempotency.confirm(req.principal, idem.key, idem.fingerprint, requestId).catch(() => {});
    }
    return { requestId, waiter };
  }

  /**
   * Claims the call's `Idempotency-Key` for `requestId`; the request an earlier call with it started, when
   * there is one. Throws for a key used on a different request, or one whose first call is not recorded yet.
   */
  async function claimKey(req: InvokeRequest, idem: IdempotentCall, requestId: string): Promise<string | undefined> {
    const claim = await deps.idempotency
      .claim(req.principal, idem.key, idem.fingerprint, requestId)
      .catch((err: unknown) => {
        // The claim may still land once Redis answers; nothing was queued for it, so give it up (the
        // release travels behind the claim on the same connection). Not waited for: the client's
        // answer must not wait out a second command timeout.
        void deps.idempotency.release(req.principal, idem.key, idem.fingerprint, requestId).catch(() => {});
        throw err;
      });
    if (claim.kind === 'existing') {
      // The first call may still be between its claim and its queueing (or have failed there):
      // without a record there is nothing to wait for yet. Come back shortly.
      if (!(await ownerOf(claim.requestId))) {
        throw new AppError('UNAVAILABLE', 'the first call with this Idempotency-Key is not recorded yet; retry', {
          retryAfterSeconds: 1,
        });
      }
      return claim.requestId;
    }
    if (claim.kind === 'mismatch') {
      throw new AppError(
        'UNPROCESSABLE',
        `Idempotency-Key was already used for a different request (request '${claim.requestId}')`,
      );
    }
    return undefined;
  }

  /** Admits the request to its version's queue and adds it: the record, the kept input and the job, in one step. */
  async function queue(req: InvokeRequest, fv: FunctionVersion, requestId: string, stream: boolean): Promise<void> {
    await deps.queueGuard.admit(fv.versionId);
    const worker = fv.model?.sequence ? await sequenceWorker(fv.versionId, req) : undefined;
    const { input, stored, entryBytes } = splitInput(fv.container ? verbatim(req) : req);
    await deps.queueGuard.admitBytes(req.ncaId, (stored ?? entryBytes ?? req.body)?.byteLength ?? 0);
    const trace = deps.traceContext?.();
    const labels = { requestId, functionId: fv.id, versionId: fv.versionId };
    events.emit('accepted', { ...labels, at: Date.now() });
    // One step: the record, the kept input and the job are written together (one script, one round trip).
    const queued = await producer
      .enqueue(
        {
          requestId,
          functionId: fv.id,
          versionId: fv.versionId,
          input,
          headers: fv.container && req.containerHeaders ? req.containerHeaders() : req.headers,
          ...(req.assetIds && req.assetIds.length > 0 ? { assetIds: req.assetIds } : {}),
          reply: { gatewayId: completions.gatewayId, maxInlineBytes: deps.maxInlineResultBytes },
          ...(req.directOnly ? { directOnly: true } : {}),
          ...(req.respond ? { respond: req.respond } : {}),
          ...(stream ? { stream: true } : {}),
          ...(trace ? { trace } : {}),
        },
        {
          principal: req.principal,
          account: req.ncaId,
          ...(worker ? { worker } : {}),
          ...(stored ? { input: stored } : {}),
          ...(entryBytes ? { entryBytes } : {}),
        },
      )
      .catch((error: unknown) => {
        events.emit('failed', { requestId, error });
        throw error;
      });
    if (queued) events.emit('queued', labels);
    else events.emit('failed', { requestId });
  }

  /** The worker a sequence model's request must reach (the one holding its sequence), if the request names one. */
  async function sequenceWorker(versionId: string, req: InvokeRequest): Promise<string | undefined> {
    const flags = sequenceFlagsOf(kserveHeaderOf(req));
    return flags && deps.sequences ? deps.sequences.route(versionId, flags) : undefined;
  }

  /**
   * The KServe request's JSON part, where its sequence flags are: the parsed body, a gRPC call's header, or the JSON
   * that opens a binary-extension body (`Inference-Header-Content-Length` bytes of it, tritonclient's default form).
   * Undefined when there is none or it does not parse: the worker refuses such a request with the reason.
   */
  function kserveHeaderOf(req: InvokeRequest): unknown {
    const { input } = req;
    if (input.kind === 'json') return input.value;
    if (input.kind === 'kserve') return input.header;
    const length = Number(req.headers['inference-header-content-length']);
    if (!req.body || !Number.isSafeInteger(length) || length <= 0 || length > req.body.length) return undefined;
    try {
      return JSON.parse(req.body.toString('utf8', 0, length));
    } catch {
      return undefined;
    }
  }

  /**
   * A container function gets the client's body as sent (NVCF forwards it to the inference server unchanged): JSON
   * was parsed only to refuse a malformed body at once, and travels as its bytes, not written again from the parse
   * (which would, say, round an integer past 2^53 or turn 1.50 into 1.5).
   */
  function verbatim(req: InvokeRequest): InvokeRequest {
    if (req.input.kind !== 'json' || !req.body) return req;
    return { ...req, input: { kind: 'entry', contentType: req.input.contentType } };
  }

  /**
   * Small inputs travel inside their job; larger ones beside it (the enqueue's `input`), as the raw
   * bytes: a queue entry is copied whole to the worker that reads it, and should stay small.
   */
  function splitInput(req: InvokeRequest): { input: InvocationInput; stored?: Buffer; entryBytes?: Buffer } {
    const { input } = req;
    if (input.kind === 'stored') return { input };
    // A KServe request's tensors are raw bytes, never base64: small ones ride in the queue entry beside the job
    // (the worker gets them with it: no second read, no key), larger ones wait beside it.
    if (input.kind === 'kserve') {
      if (input.binaryBytes === 0 || !req.body) return { input };
      if (req.body.length <= deps.maxJobInputBytes) {
        return { input: { ...input, inEntry: true }, entryBytes: req.body };
      }
      return { input, stored: req.body };
    }
    if (input.kind === 'entry') {
      if (!req.body) throw new Error('an entry input needs the request body');
      if (req.body.length <= deps.maxJobInputBytes) return { input, entryBytes: req.body };
      return { input: { kind: 'stored', contentType: input.contentType, format: 'bytes' }, stored: req.body };
    }
    // Base64 inside the job is what gateways of earlier releases queued: none is made here.
    if (input.kind === 'bytes') return { input };
    const raw = req.body ?? Buffer.from(JSON.stringify(input.value));
    if (raw.length <= deps.maxJobInputBytes) return { input };
    return { input: { kind: 'stored', contentType: input.contentType, format: 'json' }, stored: raw };
  }

  /** Long-polls an existing request: registered first, then checked once (it may be done already). */
  async function poll(requestId: string, pollSeconds: number, signal?: AbortSignal): Promise<InvocationOutcome> {
    const waiter = register(requestId, pollSeconds, signal);
    const view = await store.peek(requestId);
    if (view.kind === 'pending') return settle(requestId, waiter);
    waiter.settle({ kind: 'aborted' });
    return outcomeOf(requestId, view);
  }

  return {
    events,

    async invoke(req) {
      const started = await enqueue(req, false);
      if ('existing' in started) return poll(started.existing, req.pollSeconds, req.signal);
      return settle(started.requestId, started.waiter);
    },

    async startStream(req) {
      const started = await enqueue(req, true);
      if (!('existing' in started)) return started;
      const requestId = started.existing;
      return { requestId, waiter: register(requestId, req.pollSeconds, req.signal) };
    },

    delivered(requestId, result) {
      events.emit('delivered', { requestId, status: answerStatus(result), streamed: false });
      return store.markDelivered(requestId).catch((err: unknown) => onBackgroundError(err, requestId));
    },

    reportDelivered(requestId, result, streamed) {
      events.emit('delivered', { requestId, status: answerStatus(result), streamed });
    },

    async follow(requestId, pollSeconds, opts) {
      const owner = await ownerOf(requestId);
      if (owner && !(await opts.authorize({ requestId, ...owner }))) return undefined;
      return register(requestId, pollSeconds, opts.signal);
    },

    async status(requestId, pollSeconds, opts) {
      const owner = await ownerOf(requestId);
      if (owner && !(await opts.authorize({ requestId, ...owner }))) return { kind: 'unknown', requestId };
      return poll(requestId, pollSeconds, opts.signal);
    },
  };
}
