import type { CompletionWaiter, RequestOwner, RequestStore, RequestView, Waiter } from '@nvcf/queue';
import type { InvocationEventEmitter } from './invocation-events.ts';
import type { InvocationOutcome, InvocationService, RequestAccess } from './invocation-service.ts';

/** Waiting for requests on this gateway: its own (just queued) and existing ones (status polls, followers). */
export interface RequestWaits extends Pick<InvocationService, 'follow' | 'status'> {
  /** Registers a waiter; a completion reaching it is reported (`completed`) at the moment it arrives. */
  register(requestId: string, pollSeconds: number, signal?: AbortSignal): Waiter;
  /** Reads who a request belongs to, reporting that a client here takes it up (`followed`). */
  ownerOf(requestId: string): Promise<RequestOwner | undefined>;
  /**
   * Waits, then reads once. A result that came inline needs no read. Nothing is marked delivered here:
   * the caller does that (`delivered`) once the client has the answer, so a connection that drops while
   * the answer is written loses nothing (the client polls again).
   */
  settle(requestId: string, waiter: Waiter): Promise<InvocationOutcome>;
  /** Long-polls an existing request: registered first, then checked once (it may be done already). */
  poll(requestId: string, pollSeconds: number, signal?: AbortSignal): Promise<InvocationOutcome>;
}

/** What a read of the request store means to a caller. */
function outcomeOf(requestId: string, view: RequestView): InvocationOutcome {
  if (view.kind === 'result') return { kind: 'result', requestId, result: view.result };
  if (view.kind === 'pending') {
    return { kind: 'pending', requestId, percent: view.percent, ...(view.partial ? { partial: view.partial } : {}) };
  }
  return { kind: 'unknown', requestId };
}

/** The waits over the process's one completion subscription and the request store, reporting to `events`. */
export function createRequestWaits(
  completions: CompletionWaiter,
  store: RequestStore,
  events: InvocationEventEmitter,
): RequestWaits {
  const register = (requestId: string, pollSeconds: number, signal?: AbortSignal): Waiter => {
    const waiter = completions.register(requestId, Date.now() + pollSeconds * 1000, signal);
    void waiter.outcome.then((o) => {
      if (o.kind === 'completed') events.emit('completed', { requestId, at: Date.now() });
    });
    return waiter;
  };
  const ownerOf = async (requestId: string): Promise<RequestOwner | undefined> => {
    const owner = await store.owner(requestId);
    if (owner) events.emit('followed', { requestId, functionId: owner.functionId, versionId: owner.versionId });
    return owner;
  };
  /**
   * Whether the caller may take up this request (an unknown one: yes, it answers as unknown). Reported as `followed`
   * only once authorized: another account's polls of ids it does not own must not churn this gateway's metrics.
   */
  const mayFollow = async (
    requestId: string,
    authorize: (request: RequestAccess) => Promise<boolean>,
  ): Promise<boolean> => {
    const owner = await store.owner(requestId);
    if (!owner) return true;
    if (!(await authorize({ requestId, ...owner }))) return false;
    events.emit('followed', { requestId, functionId: owner.functionId, versionId: owner.versionId });
    return true;
  };
  const settle = async (requestId: string, waiter: Waiter): Promise<InvocationOutcome> => {
    const outcome = await waiter.outcome;
    if (outcome.kind === 'aborted') return { kind: 'pending', requestId, percent: 0 };
    if (outcome.kind === 'completed' && outcome.result) return { kind: 'result', requestId, result: outcome.result };
    return outcomeOf(requestId, await store.peek(requestId));
  };
  const poll = async (requestId: string, pollSeconds: number, signal?: AbortSignal): Promise<InvocationOutcome> => {
    const waiter = register(requestId, pollSeconds, signal);
    const view = await store.peek(requestId);
    if (view.kind === 'pending') return settle(requestId, waiter);
    waiter.settle({ kind: 'aborted' });
    return outcomeOf(requestId, view);
  };
  return {
    register,
    ownerOf,
    settle,
    poll,
    async follow(requestId, pollSeconds, opts) {
      if (!(await mayFollow(requestId, opts.authorize))) return undefined;
      return register(requestId, pollSeconds, opts.signal);
    },
    async status(requestId, pollSeconds, opts) {
      if (!(await mayFollow(requestId, opts.authorize))) return { kind: 'unknown', requestId };
      return poll(requestId, pollSeconds, opts.signal);
    },
  };
}
